/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Device memory TCP: dma-buf bindings.
 *
 * A binding maps a dma-buf for one network device and carves it into
 * page-sized struct net_iov: an RX binding hands them to the device's RX
 * queues through a page pool memory provider, a TX binding lets sendmsg()
 * point skb fragments at them.
 */
#ifndef _NET_CORE_DEVMEM_H
#define _NET_CORE_DEVMEM_H

#include <linux/dma-direction.h>
#include <linux/err.h>
#include <linux/refcount.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <net/netmem.h>

struct cred;
struct dma_buf;
struct dma_buf_attachment;
struct iov_iter;
struct net;
struct net_device;
struct netdev_rx_queue;
struct netlink_ext_ack;
struct page_pool;
struct sg_table;
struct sock;
struct sk_buff;

/**
 * struct net_devmem_dmabuf_binding - a dma-buf mapped for a network device
 * @dmabuf: the dma-buf (a reference is held)
 * @attachment: its attachment to the device's parent (DMA) device
 * @sgt: the mapped scatter list
 * @direction: DMA_FROM_DEVICE (RX) or DMA_TO_DEVICE (TX)
 * @dev: the network device, or NULL once it is gone (then nothing is
 *	mapped any more)
 * @dev_tracker: tracks the reference held on @dev
 * @free_niovs: RX: a stack of the net_iovs no page pool holds
 * @num_free: RX: entries on @free_niovs
 * @free_lock: RX: protects @free_niovs and @num_free
 * @tx_vec: TX: the net_iov of every page of the dma-buf, by page index
 * @chunk_owners: the chunks' struct net_devmem_chunk_owner, to free
 * @ref: references: the owner's until unbind, one per page pool that
 *	uses the binding (a page pool lives until its last buffer returns),
 *	one per skb fragment pointing at a TX net_iov, and short-lived ones
 *	of sendmsg() callers
 * @free_work: unmaps and frees the binding after its last reference
 * @unbound_node: entry in the list of unbound TX bindings still mapped,
 *	or of unbound RX bindings waiting for a queue to leave them
 * @leaving: unbound, but a queue still runs on its memory: it keeps its
 *	id until that queue leaves
 * @bound_rxqs: RX queue indexes of @dev that use this binding as their
 *	memory provider
 * @id: the id user space knows the binding by (NETDEV_A_DMABUF_ID)
 * @owner_net: network namespace of the netlink socket that made it
 * @owner_portid: port id of that socket
 * @owner_sk: that socket (a reference is held): the binding is unbound
 *	when it is released. A port id alone does not name it: a new socket
 *	may take the id before the old one's release is announced.
 * @owner_cred: credentials of the task that asked for the binding; a TX
 *	binding sends only for tasks of the same user (or with
 *	CAP_NET_ADMIN over @owner_net), see net_devmem_get_tx_binding()
 * @size: bytes of the dma-buf that are mapped
 * @num_pages: @size in pages
 * @rcu: frees the binding after an RCU grace period (lookups by id run
 *	under RCU)
 *
 * Locking: @dev, @bound_rxqs, @owner_net, @owner_portid, @owner_sk and
 * @owner_cred are set before the id is published; @dev and @bound_rxqs
 * change under RTNL only; the transmit path reads @dev with READ_ONCE() (it only
 * compares it). The id map (net_devmem_dmabuf_bindings) has its own
 * xarray lock; lookups take a reference under RCU. @ref is atomic.
 * @free_niovs and @num_free are under @free_lock, taken with BH disabled
 * (page pools allocate in NAPI and release in process context or softirq,
 * never with hard interrupts off). @unbound_node and @leaving are
 * under RTNL. @tx_vec and @direction are written before the id is
 * published and never change.
 */
struct net_devmem_dmabuf_binding {
	struct dma_buf *dmabuf;
	struct dma_buf_attachment *attachment;
	struct sg_table *sgt;
	enum dma_data_direction direction;
	struct net_device *dev;
	netdevice_tracker dev_tracker;
	struct net_iov **free_niovs;
	unsigned long num_free;
	spinlock_t free_lock;	/* protects free_niovs and num_free */
	struct net_iov **tx_vec;
	struct list_head chunk_owners;
	refcount_t ref;
	struct work_struct free_work;
	struct list_head unbound_node;
	bool leaving;
	struct xarray bound_rxqs;
	u32 id;
	struct net *owner_net;
	u32 owner_portid;
	struct sock *owner_sk;
	const struct cred *owner_cred;
	size_t size;
	unsigned long num_pages;
	struct rcu_head rcu;
};

/**
 * struct net_devmem_chunk_owner - one scatter entry of a binding
 * @area: the net_iovs of the entry, and its offset in the dma-buf
 * @base_dma_addr: device address of the entry's first byte
 * @binding: the binding the entry belongs to
 * @node: entry in the binding's chunk_owners
 */
struct net_devmem_chunk_owner {
	struct net_iov_area area;
	dma_addr_t base_dma_addr;
	struct net_devmem_dmabuf_binding *binding;
	struct list_head node;
};

#if IS_ENABLED(CONFIG_NET_DEVMEM)
struct net_devmem_dmabuf_binding *
net_devmem_bind_dmabuf(struct net_device *dev,
		       enum dma_data_direction direction,
		       unsigned int dmabuf_fd, struct sock *owner_sk,
		       u32 owner_portid, struct netlink_ext_ack *extack);
void net_devmem_unbind_dmabuf(struct net_devmem_dmabuf_binding *binding);
int net_devmem_bind_dmabuf_to_queue(struct net_device *dev, u32 rxq_idx,
				    struct net_devmem_dmabuf_binding *binding,
				    struct netlink_ext_ack *extack);
void net_devmem_unbind_owner(struct net *net, u32 portid);
u32 net_devmem_rxq_binding_id(struct netdev_rx_queue *rxq);
u32 net_devmem_iov_binding_id(const struct net_iov *niov);
u32 net_devmem_pool_binding_id(const struct page_pool *pool);
void net_devmem_dmabuf_binding_put(struct net_devmem_dmabuf_binding *binding);
struct net_devmem_dmabuf_binding *net_devmem_get_tx_binding(struct net *net,
							    u32 id);
struct net_iov *net_devmem_tx_niov(struct net_devmem_dmabuf_binding *binding,
				   u64 offset);
int net_devmem_tx_check_iter(struct net_devmem_dmabuf_binding *binding,
			     const struct iov_iter *from);
int net_devmem_zerocopy_fill(struct sock *sk, struct sk_buff *skb,
			     struct iov_iter *from, size_t length,
			     struct net_devmem_dmabuf_binding *binding);
bool net_devmem_tx_skb_ok(const struct sk_buff *skb,
			  const struct net_device *dev);

/**
 * net_iov_binding() - the binding a dma-buf net_iov belongs to
 * @niov: the net_iov
 *
 * Return: the binding whose dma-buf @niov is a page of.
 */
static inline struct net_devmem_dmabuf_binding *
net_iov_binding(const struct net_iov *niov)
{
	return container_of(niov->owner, struct net_devmem_chunk_owner,
			    area)->binding;
}
#else
static inline struct net_devmem_dmabuf_binding *
net_devmem_bind_dmabuf(struct net_device *dev,
		       enum dma_data_direction direction,
		       unsigned int dmabuf_fd, struct sock *owner_sk,
		       u32 owner_portid, struct netlink_ext_ack *extack)
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

static inline u32 net_devmem_pool_binding_id(const struct page_pool *pool)
{
	return 0;
}

static inline void
net_devmem_dmabuf_binding_put(struct net_devmem_dmabuf_binding *binding)
{
}

static inline struct net_devmem_dmabuf_binding *
net_devmem_get_tx_binding(struct net *net, u32 id)
{
	return ERR_PTR(-EINVAL);
}

static inline int
net_devmem_tx_check_iter(struct net_devmem_dmabuf_binding *binding,
			 const struct iov_iter *from)
{
	return -EFAULT;
}

static inline int
net_devmem_zerocopy_fill(struct sock *sk, struct sk_buff *skb,
			 struct iov_iter *from, size_t length,
			 struct net_devmem_dmabuf_binding *binding)
{
	return -EFAULT;
}

static inline bool net_devmem_tx_skb_ok(const struct sk_buff *skb,
					const struct net_device *dev)
{
	return false;
}
#endif

#endif /* _NET_CORE_DEVMEM_H */
