/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Network memory: a handle for the memory behind an skb fragment or a page
 * pool buffer, which is either a struct page (host memory) or a struct
 * net_iov (memory the CPU must not touch, such as a dma-buf on a GPU).
 *
 * A netmem_ref holds the pointer of either, with bit 0 set for a net_iov.
 * Code that does not know which it holds uses the netmem_*() accessors;
 * netmem_to_page() refuses (NULL) to turn a net_iov into a page, so that a
 * page helper is never applied to device memory.
 */
#ifndef _NET_NETMEM_H
#define _NET_NETMEM_H

#include <linux/atomic.h>
#include <linux/mm.h>
#include <linux/types.h>
#include <net/net_debug.h>

struct page_pool;
struct net_iov_area;

/**
 * typedef netmem_ref - a struct page or a struct net_iov
 *
 * Bit 0 (NET_IOV) tells which; both structures are at least 4-byte
 * aligned so the bit is free. Never dereference it directly.
 */
typedef unsigned long __bitwise netmem_ref;

#define NET_IOV		0x01UL

/**
 * struct net_iov - one page-sized piece of memory that has no struct page
 * @pp_magic: PP_SIGNATURE while a page pool owns it, as page->pp_magic
 * @pp: the page pool it was allocated through (RX); NULL for a net_iov of
 *	a TX binding, which never belongs to a page pool
 * @owner: the area it belongs to; gives its offset in the underlying buffer
 * @dma_addr: the address the device uses for it
 * @pp_ref_count: RX: references held by the page pool's user (driver or
 *	skb fragments) and by user-space tokens; the buffer goes back to
 *	its pool when the count drops to zero. Unused for TX, where a
 *	reference is one on the binding (see net_devmem_tx_iov_get())
 *
 * net_iovs are created in arrays, one per page of a memory area (see
 * struct net_iov_area), by a memory provider such as a dma-buf binding.
 */
struct net_iov {
	unsigned long pp_magic;
	struct page_pool *pp;
	struct net_iov_area *owner;
	dma_addr_t dma_addr;
	atomic_long_t pp_ref_count;
};

/**
 * struct net_iov_area - a contiguous range of net_iovs
 * @niovs: one net_iov per page of the range
 * @num_niovs: number of entries in @niovs
 * @base_virtual: offset of the range's first byte in the underlying buffer
 *	(for a dma-buf: the offset reported to user space)
 */
struct net_iov_area {
	struct net_iov *niovs;
	size_t num_niovs;
	unsigned long base_virtual;
};

/**
 * struct memory_provider_ops - where a page pool's buffers come from
 * @alloc: hand one net_iov to @pool, or return NULL when the provider is
 *	empty
 * @release: take back a net_iov whose last reference is gone
 * @init: called when a page pool attaches to the provider; may refuse
 * @destroy: called when that page pool is freed
 *
 * A page pool created for an RX queue that has a provider installed (see
 * struct pp_memory_provider_params) gets its buffers from the provider
 * instead of the page allocator. Buffers from a provider are never DMA
 * mapped, unmapped or synced by the page pool: the provider owns the
 * mapping.
 */
struct memory_provider_ops {
	struct net_iov *(*alloc)(struct page_pool *pool, gfp_t gfp);
	void (*release)(struct page_pool *pool, struct net_iov *niov);
	int (*init)(struct page_pool *pool);
	void (*destroy)(struct page_pool *pool);
};

/**
 * struct pp_memory_provider_params - the provider installed on an RX queue
 * @mp_ops: the provider's operations, NULL when the queue uses host memory
 * @mp_priv: the provider's data (for a dma-buf: the binding)
 * @pools_attached: page pools created for the queue that took the provider;
 *	lets the core check that a queue restart really installed it
 *
 * Lives in struct netdev_rx_queue and is written under RTNL only.
 */
struct pp_memory_provider_params {
	const struct memory_provider_ops *mp_ops;
	void *mp_priv;
	unsigned int pools_attached;
};

/**
 * netmem_is_net_iov() - does @netmem refer to a net_iov?
 * @netmem: the handle
 *
 * Return: true for a net_iov, false for a struct page.
 */
static inline bool netmem_is_net_iov(netmem_ref netmem)
{
	return (__force unsigned long)netmem & NET_IOV;
}

/**
 * netmem_to_page() - the struct page behind @netmem
 * @netmem: the handle
 *
 * Return: the page, or NULL (with a warning on DEBUG_NET kernels) when
 * @netmem is a net_iov, which has no page.
 */
static inline struct page *netmem_to_page(netmem_ref netmem)
{
	if (netmem_is_net_iov(netmem)) {
		DEBUG_NET_WARN_ON_ONCE(1);
		return NULL;
	}
	return (__force struct page *)netmem;
}

/**
 * netmem_to_net_iov() - the struct net_iov behind @netmem
 * @netmem: the handle
 *
 * Return: the net_iov, or NULL when @netmem is a page.
 */
static inline struct net_iov *netmem_to_net_iov(netmem_ref netmem)
{
	if (!netmem_is_net_iov(netmem))
		return NULL;
	return (struct net_iov *)((__force unsigned long)netmem & ~NET_IOV);
}

/**
 * page_to_netmem() - the handle for a struct page
 * @page: the page
 *
 * Return: a netmem_ref referring to @page.
 */
static inline netmem_ref page_to_netmem(struct page *page)
{
	return (__force netmem_ref)page;
}

/**
 * net_iov_to_netmem() - the handle for a struct net_iov
 * @niov: the net_iov
 *
 * Return: a netmem_ref referring to @niov.
 */
static inline netmem_ref net_iov_to_netmem(struct net_iov *niov)
{
	return (__force netmem_ref)((unsigned long)niov | NET_IOV);
}

/**
 * net_iov_idx() - index of @niov in its area
 * @niov: the net_iov
 *
 * Return: the page index of @niov inside its struct net_iov_area.
 */
static inline unsigned int net_iov_idx(const struct net_iov *niov)
{
	return niov - niov->owner->niovs;
}

/**
 * net_iov_virtual_addr() - offset of @niov in the underlying buffer
 * @niov: the net_iov
 *
 * Return: the byte offset of the page @niov stands for, in the buffer its
 * area was carved from (the dma-buf offset user space sees).
 */
static inline unsigned long net_iov_virtual_addr(const struct net_iov *niov)
{
	return niov->owner->base_virtual +
	       ((unsigned long)net_iov_idx(niov) << PAGE_SHIFT);
}

#if IS_ENABLED(CONFIG_NET_DEVMEM)
void net_devmem_tx_iov_get(struct net_iov *niov);
void net_devmem_tx_iov_put(struct net_iov *niov);
#else
static inline void net_devmem_tx_iov_get(struct net_iov *niov)
{
}

static inline void net_devmem_tx_iov_put(struct net_iov *niov)
{
}
#endif

/**
 * net_iov_get() - take a reference on a net_iov
 * @niov: the net_iov, already referenced by the caller
 */
static inline void net_iov_get(struct net_iov *niov)
{
	if (niov->pp)
		atomic_long_inc(&niov->pp_ref_count);
	else
		net_devmem_tx_iov_get(niov);
}

#ifdef CONFIG_PAGE_POOL
void net_iov_put(struct net_iov *niov);
void net_iov_put_bulk(struct net_iov **niovs, unsigned int count);
#else
static inline void net_iov_put(struct net_iov *niov)
{
}

static inline void net_iov_put_bulk(struct net_iov **niovs,
				    unsigned int count)
{
}
#endif

/**
 * netmem_get() - take a reference on a page or a net_iov
 * @netmem: the handle
 */
static inline void netmem_get(netmem_ref netmem)
{
	if (netmem_is_net_iov(netmem))
		net_iov_get(netmem_to_net_iov(netmem));
	else
		get_page(netmem_to_page(netmem));
}

#endif /* _NET_NETMEM_H */
