/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Device memory TCP: dma-buf bindings.
 *
 * A binding maps a dma-buf for one network device and carves it into
 * page-sized struct net_iov, handed to the device's RX queues through a
 * page pool memory provider.
 */
#ifndef _NET_CORE_DEVMEM_H
#define _NET_CORE_DEVMEM_H

#include <linux/refcount.h>
#include <linux/xarray.h>
#include <net/netmem.h>

struct dma_buf;
struct dma_buf_attachment;
struct gen_pool;
struct net;
struct net_device;
struct netdev_rx_queue;
struct netlink_ext_ack;
struct sg_table;

/**
 * struct net_devmem_dmabuf_binding - a dma-buf mapped for a network device
 * @dmabuf: the dma-buf (a reference is held)
 * @attachment: its attachment to the device's parent (DMA) device
 * @sgt: the mapped scatter list
 * @dev: the network device, or NULL once it is gone (then nothing is
 *	mapped any more)
 * @chunk_pool: free pages of the dma-buf, one chunk per scatter entry
 * @chunk_owners: the chunks' struct dmabuf_genpool_chunk_owner, to free
 * @ref: references: the owner's until unbind, and one per page pool that
 *	uses the binding (a page pool lives until its last buffer returns)
 * @bound_rxqs: RX queue indexes of @dev that use this binding as their
 *	memory provider
 * @id: the id user space knows the binding by (NETDEV_A_DMABUF_ID)
 * @owner_net: network namespace of the netlink socket that made it
 * @owner_portid: port id of that socket; the binding is unbound when the
 *	socket is released
 * @size: bytes of the dma-buf that are mapped
 * @num_pages: @size in pages
 *
 * Locking: @dev, @bound_rxqs, @owner_net and @owner_portid change under
 * RTNL only. The id map (net_devmem_dmabuf_bindings) has its own xarray
 * lock; lookups take a reference under RCU. @ref is atomic. @chunk_pool
 * allocations are lock free (gen_pool).
 */
struct net_devmem_dmabuf_binding {
	struct dma_buf *dmabuf;
	struct dma_buf_attachment *attachment;
	struct sg_table *sgt;
	struct net_device *dev;
	netdevice_tracker dev_tracker;
	struct gen_pool *chunk_pool;
	struct list_head chunk_owners;
	refcount_t ref;
	struct xarray bound_rxqs;
	u32 id;
	struct net *owner_net;
	u32 owner_portid;
	size_t size;
	unsigned long num_pages;
	struct rcu_head rcu;
};

/**
 * struct dmabuf_genpool_chunk_owner - one scatter entry of a binding
 * @area: the net_iovs of the entry, and its offset in the dma-buf
 * @base_dma_addr: device address of the entry's first byte
 * @binding: the binding the entry belongs to
 * @node: entry in the binding's chunk_owners
 */
struct dmabuf_genpool_chunk_owner {
	struct net_iov_area area;
	dma_addr_t base_dma_addr;
	struct net_devmem_dmabuf_binding *binding;
	struct list_head node;
};

#if IS_ENABLED(CONFIG_NET_DEVMEM)
struct net_devmem_dmabuf_binding *
net_devmem_bind_dmabuf(struct net_device *dev, unsigned int dmabuf_fd,
		       struct net *owner_net, u32 owner_portid,
		       struct netlink_ext_ack *extack);
void net_devmem_unbind_dmabuf(struct net_devmem_dmabuf_binding *binding);
int net_devmem_bind_dmabuf_to_queue(struct net_device *dev, u32 rxq_idx,
				    struct net_devmem_dmabuf_binding *binding,
				    struct netlink_ext_ack *extack);
void net_devmem_unbind_owner(struct net *net, u32 portid);
u32 net_devmem_rxq_binding_id(struct netdev_rx_queue *rxq);
u32 net_devmem_iov_binding_id(const struct net_iov *niov);
void net_devmem_dmabuf_binding_put(struct net_devmem_dmabuf_binding *binding);

/**
 * net_iov_binding() - the binding a dma-buf net_iov belongs to
 * @niov: the net_iov
 *
 * Return: the binding whose dma-buf @niov is a page of.
 */
static inline struct net_devmem_dmabuf_binding *
net_iov_binding(const struct net_iov *niov)
{
	return container_of(niov->owner, struct dmabuf_genpool_chunk_owner,
			    area)->binding;
}
#else
static inline struct net_devmem_dmabuf_binding *
net_devmem_bind_dmabuf(struct net_device *dev, unsigned int dmabuf_fd,
		       struct net *owner_net, u32 owner_portid,
		       struct netlink_ext_ack *extack)
{
	NL_SET_ERR_MSG(extack, "Device memory TCP is not built in (CONFIG_NET_DEVMEM)");
	return ERR_PTR(-EOPNOTSUPP);
}

static inline void
net_devmem_unbind_dmabuf(struct net_devmem_dmabuf_binding *binding)
{
}

static inline int
net_devmem_bind_dmabuf_to_queue(struct net_device *dev, u32 rxq_idx,
				struct net_devmem_dmabuf_binding *binding,
				struct netlink_ext_ack *extack)
{
	return -EOPNOTSUPP;
}

static inline void net_devmem_unbind_owner(struct net *net, u32 portid)
{
}

static inline u32 net_devmem_rxq_binding_id(struct netdev_rx_queue *rxq)
{
	return 0;
}
#endif

#endif /* _NET_CORE_DEVMEM_H */
