// SPDX-License-Identifier: GPL-2.0
/*
 * Memory registration.  regMr takes host memory (NCCL_PTR_HOST) and
 * records the range, so isend/irecv can check that what they are given was
 * registered on that comm.  regMrDmaBuf takes a dma-buf that this process
 * also has mapped at `data` (NCCL_PTR_HOST): on a send comm it binds the
 * dma-buf for devmem TX (tx.c), on a recv comm it is host memory.
 *
 * Device memory (NCCL_PTR_CUDA) needs libcuda (cuda.c) and must be device
 * memory from its first byte to its last; a GPU dma-buf on a send comm is
 * offered to bind-tx like any other, and sent through a host stage when
 * refused (gpu.c).  NCCL passes it only when getProperties advertises
 * CUDA|DMABUF (the GPU test mode, gpu.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plugin.h"

static ncclResult_t reg(void *comm, void *data, size_t size, int type, uint64_t offset, int fd,
			void **mh)
{
	const char *what = fd < 0 ? "regMr" : "regMrDmaBuf";
	struct dm_comm *c;
	struct dm_mr *mr;

	if (!mh)
		return ncclInvalidArgument;
	*mh = NULL;
	c = dm_comm_check(comm, -1);
	if (!c) {
		DM_WARN("%s: %p is not a comm of this plugin", what, comm);
		return ncclInvalidArgument;
	}
	if (type != NCCL_PTR_HOST && type != NCCL_PTR_CUDA) {
		DM_WARN("%s: memory type %d is not supported (NCCL_PTR_HOST or NCCL_PTR_CUDA)", what,
			type);
		return ncclInvalidArgument;
	}
	if (!data && size) {
		DM_WARN("%s: NULL address with size %zu", what, size);
		return ncclInvalidArgument;
	}
	if ((uintptr_t)data + size < (uintptr_t)data) {
		DM_WARN("%s: range %p + %zu wraps", what, data, size);
		return ncclInvalidArgument;
	}
	if (type == NCCL_PTR_CUDA) {
		const char *why;

		if (!dm_cuda_loaded(&why)) {
			DM_WARN("%s: GPU memory, but %s", what, why);
			return ncclInvalidArgument;
		}
		if (size && !dm_cuda_is_device(data, size)) {
			DM_WARN("%s: %p + %zu is not GPU memory (or spans allocations)", what, data,
				size);
			return ncclInvalidArgument;
		}
		if (!c->gpu || !c->gpu->stage[DM_GPU_CTRL]) {
			DM_WARN("%s: GPU memory on a comm without GPU staging (the plugin takes it "
				"only in the GPU test mode, %s=1)", what, DM_ENV_TEST_GPU);
			return ncclInvalidArgument;
		}
	}
	if (fd >= 0) {
		off_t end = lseek(fd, 0, SEEK_END);

		/* A dma-buf tells its size (its file offset means nothing);
		 * bind-tx judges what does not. */
		if (end >= 0 && (offset > (uint64_t)end || size > (uint64_t)end - offset)) {
			DM_WARN("%s: %zu bytes at offset %llu are past the end of the dma-buf "
				"(%lld bytes)", what, size, (unsigned long long)offset,
				(long long)end);
			return ncclInvalidArgument;
		}
	}
	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return ncclSystemError;
	mr->magic = DM_MR_MAGIC;
	mr->comm = comm;
	mr->base = data;
	mr->size = size;
	mr->type = type;
	mr->tx_nl.fd = -1;
	mr->dmabuf_off = offset;
	if (fd >= 0 && size && c->magic == DM_SEND_MAGIC) {
		int err = dm_tx_bind(mr, c->dev, fd);

		if (err) {
			DM_WARN("%s: comm %p: %s", what, comm, strerror(-err));
			free(mr);
			return ncclInvalidArgument;
		}
	}
	*mh = mr;
	return ncclSuccess;
}

ncclResult_t dm_reg_mr(void *comm, void *data, size_t size, int type, void **mh)
{
	return reg(comm, data, size, type, 0, -1, mh);
}

ncclResult_t dm_reg_mr_dmabuf(void *comm, void *data, size_t size, int type, uint64_t offset,
			      int fd, void **mh)
{
	if (fd < 0) {
		if (mh)
			*mh = NULL;
		DM_WARN("regMrDmaBuf: no dma-buf (fd %d)", fd);
		return ncclInvalidArgument;
	}
	return reg(comm, data, size, type, offset, fd, mh);
}

ncclResult_t dm_dereg_mr(void *comm, void *mh)
{
	struct dm_mr *mr = mh;

	if (!mr || mr->magic != DM_MR_MAGIC || mr->comm != comm) {
		DM_WARN("deregMr: %p is not a memory handle of comm %p", mh, comm);
		return ncclInvalidArgument;
	}
	mr->magic = 0;
	dm_tx_unbind(mr);
	free(mr);
	return ncclSuccess;
}

const struct dm_mr *dm_mr_covers(const void *comm, void *mh, const void *data, uint64_t size)
{
	const struct dm_mr *mr = mh;
	uintptr_t p = (uintptr_t)data, b;

	if (!mr || mr->magic != DM_MR_MAGIC || mr->comm != comm)
		return NULL;
	if (!size)
		return mr;
	b = (uintptr_t)mr->base;
	if (p < b || size > mr->size || p - b > mr->size - size)
		return NULL;
	return mr;
}
