// SPDX-License-Identifier: GPL-2.0
/*
 * Memory registration.  Step 1 (copy mode) serves host memory only:
 * regMr accepts NCCL_PTR_HOST and records the range, so isend/irecv can
 * check that what they are given was registered on that comm.
 *
 * Placeholders for later steps:
 *   - regMr(NCCL_PTR_CUDA) and regMrDmaBuf: devmem TX binds the dma-buf
 *     with bind-tx inside regMrDmaBuf (NCCL closes the fd right after the
 *     call), CUDA support loads libcuda at run time.  Both answer
 *     ncclInvalidArgument today, and getProperties advertises HOST only,
 *     so NCCL never calls them with device memory.
 */
#include <stdlib.h>

#include "plugin.h"

ncclResult_t dm_reg_mr(void *comm, void *data, size_t size, int type, void **mh)
{
	struct dm_mr *mr;

	if (!mh)
		return ncclInvalidArgument;
	*mh = NULL;
	if (!dm_comm_check(comm, -1)) {
		DM_WARN("regMr: %p is not a comm of this plugin", comm);
		return ncclInvalidArgument;
	}
	if (type != NCCL_PTR_HOST) {
		DM_WARN("regMr: memory type %d is not supported (host memory only in copy mode)",
			type);
		return ncclInvalidArgument;
	}
	if (!data && size) {
		DM_WARN("regMr: NULL address with size %zu", size);
		return ncclInvalidArgument;
	}
	if ((uintptr_t)data + size < (uintptr_t)data) {
		DM_WARN("regMr: range %p + %zu wraps", data, size);
		return ncclInvalidArgument;
	}
	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return ncclSystemError;
	mr->magic = DM_MR_MAGIC;
	mr->comm = comm;
	mr->base = data;
	mr->size = size;
	mr->type = type;
	*mh = mr;
	return ncclSuccess;
}

ncclResult_t dm_reg_mr_dmabuf(void *comm, void *data, size_t size, int type, uint64_t offset,
			      int fd, void **mh)
{
	(void)data;
	(void)offset;
	(void)fd;
	if (mh)
		*mh = NULL;
	DM_WARN("regMrDmaBuf: dma-buf registration (comm %p, type %d, %zu bytes) is not "
		"supported yet", comm, type, size);
	return ncclInvalidArgument;
}

ncclResult_t dm_dereg_mr(void *comm, void *mh)
{
	struct dm_mr *mr = mh;

	if (!mr || mr->magic != DM_MR_MAGIC || mr->comm != comm) {
		DM_WARN("deregMr: %p is not a memory handle of comm %p", mh, comm);
		return ncclInvalidArgument;
	}
	mr->magic = 0;
	free(mr);
	return ncclSuccess;
}

int dm_mr_covers(const void *comm, void *mh, const void *data, uint64_t size)
{
	const struct dm_mr *mr = mh;
	uintptr_t p = (uintptr_t)data, b;

	if (!mr || mr->magic != DM_MR_MAGIC || mr->comm != comm || mr->type != NCCL_PTR_HOST)
		return -1;
	if (!size)
		return 0;
	b = (uintptr_t)mr->base;
	if (p < b || size > mr->size || p - b > mr->size - size)
		return -1;
	return 0;
}
