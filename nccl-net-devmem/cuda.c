// SPDX-License-Identifier: GPL-2.0
/*
 * The CUDA driver API, loaded at run time: dlopen("libcuda.so.1") once per
 * process, the few entry points the plugin uses looked up by their
 * versioned names, their types declared here (no CUDA headers at build
 * time).  Where libcuda is missing or cuInit fails, the plugin serves host
 * memory only and says why once.
 *
 * The table is written once under pthread_once and read-only afterwards.
 * Every call works on the calling thread's current context: NCCL's proxy
 * threads have theirs set, the plugin's progress threads set the one their
 * comm was made in (dm_cuda_set_ctx).
 */
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin.h"

typedef int CUresult;
typedef unsigned long long CUdeviceptr;
typedef void *CUcontext;
typedef void *CUstream;
typedef int CUdevice;

#define CU_POINTER_ATTRIBUTE_MEMORY_TYPE 2
#define CU_POINTER_ATTRIBUTE_RANGE_START_ADDR 11
#define CU_POINTER_ATTRIBUTE_RANGE_SIZE 12
#define CU_MEMORYTYPE_DEVICE 2
#define CU_MEMHOSTALLOC_PORTABLE 0x01
#define CU_MEMHOSTALLOC_DEVICEMAP 0x02
#define CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD 1
#define CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED 124
#define CU_STREAM_NON_BLOCKING 1
#define CU_MODULE_EAGER_LOADING 1

static struct {
	CUresult (*init)(unsigned int);
	CUresult (*driver_version)(int *);
	CUresult (*error_string)(CUresult, const char **);
	CUresult (*ctx_get)(CUcontext *);
	CUresult (*ctx_set)(CUcontext);
	CUresult (*ctx_device)(CUdevice *);
	CUresult (*dev_attr)(int *, int, CUdevice);
	CUresult (*ptr_attr)(void *, int, CUdeviceptr);
	CUresult (*mem_alloc)(CUdeviceptr *, size_t);
	CUresult (*mem_free)(CUdeviceptr);
	CUresult (*host_alloc)(void **, size_t, unsigned int);
	CUresult (*host_free)(void *);
	CUresult (*host_devptr)(CUdeviceptr *, void *, unsigned int);
	CUresult (*range_handle)(void *, CUdeviceptr, size_t, int, unsigned long long);
	CUresult (*copy_async)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
	CUresult (*stream_create)(CUstream *, unsigned int);
	CUresult (*stream_destroy)(CUstream);
	CUresult (*stream_sync)(CUstream);
	CUresult (*loading_mode)(int *);	/* optional: CUDA 11.7+ */
} cu;

static pthread_once_t cuda_once = PTHREAD_ONCE_INIT;
static int cuda_ok;
static char cuda_why[160];

static void cuda_load(void)
{
	static const struct {
		const char *name;
		size_t off;
	} syms[] = {
#define SYM(f, n) { n, offsetof(__typeof__(cu), f) }
		SYM(init, "cuInit"),
		SYM(driver_version, "cuDriverGetVersion"),
		SYM(error_string, "cuGetErrorString"),
		SYM(ctx_get, "cuCtxGetCurrent"),
		SYM(ctx_set, "cuCtxSetCurrent"),
		SYM(ctx_device, "cuCtxGetDevice"),
		SYM(dev_attr, "cuDeviceGetAttribute"),
		SYM(ptr_attr, "cuPointerGetAttribute"),
		SYM(mem_alloc, "cuMemAlloc_v2"),
		SYM(mem_free, "cuMemFree_v2"),
		SYM(host_alloc, "cuMemHostAlloc"),
		SYM(host_free, "cuMemFreeHost"),
		SYM(host_devptr, "cuMemHostGetDevicePointer_v2"),
		SYM(range_handle, "cuMemGetHandleForAddressRange"),
		SYM(copy_async, "cuMemcpyAsync"),
		SYM(stream_create, "cuStreamCreate"),
		SYM(stream_destroy, "cuStreamDestroy_v2"),
		SYM(stream_sync, "cuStreamSynchronize"),
#undef SYM
	};
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL), *opt;
	int version = 0;
	unsigned i;
	CUresult r;

	if (!h) {
		snprintf(cuda_why, sizeof(cuda_why), "no libcuda.so.1 (%s)", dlerror());
		return;
	}
	for (i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
		void *f = dlsym(h, syms[i].name);

		if (!f) {
			snprintf(cuda_why, sizeof(cuda_why), "libcuda.so.1 has no %s (driver older "
				 "than CUDA 11.7?)", syms[i].name);
			memset(&cu, 0, sizeof(cu));	/* nothing points into it */
			dlclose(h);
			return;
		}
		memcpy((char *)&cu + syms[i].off, &f, sizeof(f));
	}
	opt = dlsym(h, "cuModuleGetLoadingMode");
	memcpy(&cu.loading_mode, &opt, sizeof(opt));
	r = cu.init(0);
	if (r) {
		snprintf(cuda_why, sizeof(cuda_why), "cuInit: %s", dm_cuda_error(r));
		return;		/* libcuda stays loaded: its error strings are used */
	}
	cu.driver_version(&version);
	DM_INFO(NCCL_INIT | NCCL_NET, "CUDA driver API %d.%d loaded", version / 1000,
		version % 1000 / 10);
	cuda_ok = 1;
}

int dm_cuda_loaded(const char **why)
{
	pthread_once(&cuda_once, cuda_load);
	if (why)
		*why = cuda_ok ? NULL : cuda_why;
	return cuda_ok;
}

const char *dm_cuda_error(int r)
{
	const char *s = NULL;

	if (cu.error_string && !cu.error_string(r, &s) && s)
		return s;
	return "unknown CUDA error";
}

int dm_cuda_eager(void)
{
	int mode = 0;

	return cu.loading_mode && !cu.loading_mode(&mode) && mode == CU_MODULE_EAGER_LOADING;
}

int dm_cuda_ctx(void **ctx)
{
	*ctx = NULL;
	return cu.ctx_get(ctx);
}

int dm_cuda_set_ctx(void *ctx)
{
	return cu.ctx_set(ctx);
}

int dm_cuda_device(int *ord)
{
	return cu.ctx_device(ord);
}

int dm_cuda_dmabuf_supported(int ord)
{
	int v = 0;

	if (cu.dev_attr(&v, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, ord))
		return 0;
	return v;
}

int dm_cuda_is_device(const void *p, size_t size)
{
	CUdeviceptr start = 0;
	unsigned int t1 = 0, t2 = 0;
	size_t rsize = 0;

	if (cu.ptr_attr(&t1, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)(uintptr_t)p))
		return 0;
	if (size > 1 && cu.ptr_attr(&t2, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
				    (CUdeviceptr)(uintptr_t)p + size - 1))
		return 0;
	if (t1 != CU_MEMORYTYPE_DEVICE || (size > 1 && t2 != CU_MEMORYTYPE_DEVICE))
		return 0;
	/* one allocation, where the driver can tell (not for every VMM range) */
	if (!cu.ptr_attr(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
			 (CUdeviceptr)(uintptr_t)p) &&
	    !cu.ptr_attr(&rsize, CU_POINTER_ATTRIBUTE_RANGE_SIZE, (CUdeviceptr)(uintptr_t)p) &&
	    rsize && ((CUdeviceptr)(uintptr_t)p - start > rsize ||
		      size > rsize - ((CUdeviceptr)(uintptr_t)p - start)))
		return 0;
	return 1;
}

int dm_cuda_alloc(void **p, size_t size)
{
	CUdeviceptr d = 0;
	int r = cu.mem_alloc(&d, size);

	*p = r ? NULL : (void *)(uintptr_t)d;
	return r;
}

void dm_cuda_free(void *p)
{
	if (p)
		cu.mem_free((CUdeviceptr)(uintptr_t)p);
}

int dm_cuda_host_alloc(void **p, void **dev_alias, size_t size)
{
	CUdeviceptr d = 0;
	int r;

	*p = NULL;
	r = cu.host_alloc(p, size, CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE);
	if (r)
		return r;
	if (dev_alias) {
		r = cu.host_devptr(&d, *p, 0);
		if (r) {
			cu.host_free(*p);
			*p = NULL;
			return r;
		}
		*dev_alias = (void *)(uintptr_t)d;
	}
	return 0;
}

void dm_cuda_host_free(void *p)
{
	if (p)
		cu.host_free(p);
}

int dm_cuda_dmabuf_fd(void *p, size_t size, int *fd)
{
	*fd = -1;
	return cu.range_handle(fd, (CUdeviceptr)(uintptr_t)p, size,
			       CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
}

int dm_cuda_copy(void *dst, const void *src, size_t n, void *stream)
{
	return cu.copy_async((CUdeviceptr)(uintptr_t)dst, (CUdeviceptr)(uintptr_t)src, n, stream);
}

int dm_cuda_stream(void **stream)
{
	*stream = NULL;
	return cu.stream_create(stream, CU_STREAM_NON_BLOCKING);
}

void dm_cuda_stream_free(void *stream)
{
	if (stream)
		cu.stream_destroy(stream);
}

int dm_cuda_sync(void *stream)
{
	return cu.stream_sync(stream);
}
