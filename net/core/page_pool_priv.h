/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What page_pool.c and page_pool_user.c share: the pool list that the
 * netdev netlink family reads.
 */
#ifndef _NET_CORE_PAGE_POOL_PRIV_H
#define _NET_CORE_PAGE_POOL_PRIV_H

#include <net/page_pool.h>

s32 page_pool_inflight(const struct page_pool *pool, bool strict);

int page_pool_list(struct page_pool *pool);
void page_pool_detached(struct page_pool *pool);
void page_pool_unlist(struct page_pool *pool);

#endif /* _NET_CORE_PAGE_POOL_PRIV_H */
