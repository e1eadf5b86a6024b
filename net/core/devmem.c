// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Device memory TCP: dma-buf bindings and their page pool memory provider.
 *
 * A binding attaches a dma-buf to a network device's DMA device, maps it,
 * and splits every scatter entry of the mapping into page-sized struct
 * net_iov kept on a free stack. Bound RX queues get a page pool whose
 * buffers come from that stack, so the NIC writes payload straight into
 * the dma-buf.
 */

#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/dma-buf.h>
#include <linux/mm.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/uio.h>
#include <net/netdev_queues.h>
#include <net/netlink.h>
#include <net/netmem.h>
#include <net/page_pool.h>
#include <net/sock.h>

#include "devmem.h"

/* Bindings by id. The xarray's lock protects the map; see the lock rules
 * at struct net_devmem_dmabuf_binding.
 */
static DEFINE_XARRAY_FLAGS(net_devmem_dmabuf_bindings, XA_FLAGS_ALLOC1);
static u32 net_devmem_next_id;

/* TX bindings that were unbound but stay mapped while skbs still point
 * into them. They have no id any more, and a device going away must still
 * find them. Under RTNL.
 */
static LIST_HEAD(net_devmem_unbound);

/* RX bindings unbound while a queue could not leave their memory (its
 * restart failed: no memory for a new ring, or the queue did not stop).
 * The NIC may still write into the dma-buf, so they keep their id, which
 * that queue still names (queue-get), and stay mapped; the queues are
 * tried again after NET_DEVMEM_LEAVE_RETRY, then less and less often (up
 * to NET_DEVMEM_LEAVE_RETRY_MAX apart) until they leave. Under RTNL, as
 * is net_devmem_leave_delay.
 */
static LIST_HEAD(net_devmem_leaving);
#define NET_DEVMEM_LEAVE_RETRY	HZ
/* ... doubling after each round that leaves a binding waiting, up to */
#define NET_DEVMEM_LEAVE_RETRY_MAX	(64 * HZ)
static unsigned long net_devmem_leave_delay = NET_DEVMEM_LEAVE_RETRY;
static void net_devmem_leave_work(struct work_struct *work);
static DECLARE_DELAYED_WORK(net_devmem_leave_dwork, net_devmem_leave_work);

static const struct memory_provider_ops dmabuf_devmem_ops;

static void net_devmem_release_dev(struct net_devmem_dmabuf_binding *binding);

static void net_devmem_dmabuf_binding_free(struct net_devmem_dmabuf_binding *binding)
{
	struct net_devmem_chunk_owner *owner, *tmp;

	list_for_each_entry_safe(owner, tmp, &binding->chunk_owners, node) {
		kvfree(owner->area.niovs);
		kfree(owner);
	}
	kvfree(binding->tx_vec);
	kvfree(binding->free_niovs);
	xa_destroy(&binding->bound_rxqs);
	dma_buf_put(binding->dmabuf);
	if (binding->owner_cred)
		put_cred(binding->owner_cred);
	if (binding->owner_sk)
		sock_put(binding->owner_sk);
	kfree_rcu(binding, rcu);
}

/* The last reference may go in softirq (a transmitted skb freed by the
 * driver), where the dma-buf cannot be unmapped: the rest happens here.
 */
static void net_devmem_dmabuf_binding_free_work(struct work_struct *work)
{
	struct net_devmem_dmabuf_binding *binding =
		container_of(work, struct net_devmem_dmabuf_binding, free_work);

	rtnl_lock();
	list_del(&binding->unbound_node);
	net_devmem_release_dev(binding);
	rtnl_unlock();
	net_devmem_dmabuf_binding_free(binding);
}

/**
 * net_devmem_dmabuf_binding_put() - drop a reference on a binding
 * @binding: the binding
 *
 * With the last reference the binding is unmapped (if the device still
 * has it mapped: TX bindings stay mapped until their last skb is freed)
 * and freed, from a work item. By then every net_iov is back in its
 * free stack or, for TX, referenced by no skb.
 */
void net_devmem_dmabuf_binding_put(struct net_devmem_dmabuf_binding *binding)
{
	if (refcount_dec_and_test(&binding->ref))
		schedule_work(&binding->free_work);
}

static void net_devmem_dmabuf_binding_get(struct net_devmem_dmabuf_binding *binding)
{
	refcount_inc(&binding->ref);
}

/* Unmaps the dma-buf and lets go of the device. The device's queues no
 * longer use the binding when this runs. RTNL held.
 */
static void net_devmem_release_dev(struct net_devmem_dmabuf_binding *binding)
{
	ASSERT_RTNL();
	if (!binding->dev)
		return;
	if (binding->sgt)
		dma_buf_unmap_attachment(binding->attachment, binding->sgt,
					 binding->direction);
	/* NULL when attaching is what failed */
	if (binding->attachment)
		dma_buf_detach(binding->dmabuf, binding->attachment);
	binding->sgt = NULL;
	binding->attachment = NULL;
	netdev_put(binding->dev, &binding->dev_tracker);
	/* read without RTNL by the transmit path, see net_devmem_tx_skb_ok() */
	WRITE_ONCE(binding->dev, NULL);
}

/* Returns every bound RX queue to host memory. RTNL held. Returns false
 * when some queue could not leave the binding's memory (no memory for its
 * new ring, or it did not stop): that queue stays bound, still runs on the
 * binding's memory, and the binding must stay mapped and known.
 */
static bool net_devmem_unbind_queues(struct net_devmem_dmabuf_binding *binding)
{
	struct pp_memory_provider_params mp_params = {
		.mp_ops = &dmabuf_devmem_ops,
		.mp_priv = binding,
	};
	unsigned long rxq_idx;
	bool all_left = true;
	void *entry;

	xa_for_each(&binding->bound_rxqs, rxq_idx, entry) {
		if (net_mp_close_rxq(binding->dev, rxq_idx, &mp_params)) {
			all_left = false;
			continue;
		}
		xa_erase(&binding->bound_rxqs, rxq_idx);
	}
	return all_left;
}

/* The end of an unbind: the id goes, an RX binding is unmapped (no queue
 * uses it any more), a TX one waits for its last skb. Drops the owner's
 * reference. RTNL held.
 */
static void net_devmem_unbind_finish(struct net_devmem_dmabuf_binding *binding)
{
	xa_erase(&net_devmem_dmabuf_bindings, binding->id);
	if (binding->direction == DMA_FROM_DEVICE)
		net_devmem_release_dev(binding);
	else
		list_add(&binding->unbound_node, &net_devmem_unbound);
	net_devmem_dmabuf_binding_put(binding);
}

/* Tries again the queues of the bindings on net_devmem_leaving. */
static void net_devmem_leave_work(struct work_struct *work)
{
	struct net_devmem_dmabuf_binding *binding, *tmp;

	rtnl_lock();
	list_for_each_entry_safe(binding, tmp, &net_devmem_leaving,
				 unbound_node) {
		if (binding->dev && !net_devmem_unbind_queues(binding))
			continue;
		list_del_init(&binding->unbound_node);
		binding->leaving = false;
		net_devmem_unbind_finish(binding);
	}
	if (!list_empty(&net_devmem_leaving)) {
		net_devmem_leave_delay = min(net_devmem_leave_delay * 2,
					     (unsigned long)NET_DEVMEM_LEAVE_RETRY_MAX);
		schedule_delayed_work(&net_devmem_leave_dwork,
				      net_devmem_leave_delay);
	}
	rtnl_unlock();
}

/**
 * net_devmem_unbind_dmabuf() - undo net_devmem_bind_dmabuf()
 * @binding: the binding
 *
 * Removes the id, so that no new user finds the binding, and drops the
 * owner's reference. An RX binding also returns its queues to host memory
 * and is unmapped now: the NIC no longer writes into it, and the net_iovs
 * still held by skbs or user-space tokens are never read by the CPU. If a
 * queue cannot leave (see net_mp_close_rxq()), the NIC may still write
 * into the dma-buf: the binding then keeps its id and its mapping, the
 * queue still names it, and the queue is tried again a second later,
 * then less and less often, until it leaves; only then is the rest done.
 * A TX binding stays mapped until the last skb that points into it is
 * freed, because the NIC may still be reading those bytes. Caller holds
 * RTNL.
 */
void net_devmem_unbind_dmabuf(struct net_devmem_dmabuf_binding *binding)
{
	ASSERT_RTNL();
	if (WARN_ON_ONCE(binding->leaving))
		return;
	if (binding->direction == DMA_FROM_DEVICE && binding->dev &&
	    !net_devmem_unbind_queues(binding)) {
		binding->leaving = true;
		list_add(&binding->unbound_node, &net_devmem_leaving);
		/* a new one is tried soon again, whatever the others wait */
		net_devmem_leave_delay = NET_DEVMEM_LEAVE_RETRY;
		mod_delayed_work(system_wq, &net_devmem_leave_dwork,
				 NET_DEVMEM_LEAVE_RETRY);
		return;
	}
	net_devmem_unbind_finish(binding);
}

/* Records the net_iovs of one scatter entry of a TX binding by page index
 * in the dma-buf, for sendmsg() to find them by offset.
 */
static int net_devmem_tx_vec_add(struct net_devmem_dmabuf_binding *binding,
				 struct net_iov_area *area,
				 struct netlink_ext_ack *extack)
{
	unsigned long first = area->base_virtual >> PAGE_SHIFT;
	size_t i;

	if (first + area->num_niovs > binding->num_pages) {
		NL_SET_ERR_MSG(extack,
			       "The dma-buf mapping is larger than the dma-buf");
		return -EINVAL;
	}
	for (i = 0; i < area->num_niovs; i++)
		binding->tx_vec[first + i] = &area->niovs[i];
	return 0;
}

/* Puts the net_iovs of one scatter entry of an RX binding on its free
 * stack.
 */
static int net_devmem_rx_free_add(struct net_devmem_dmabuf_binding *binding,
				  struct net_iov_area *area,
				  struct netlink_ext_ack *extack)
{
	size_t i;

	if (binding->num_free + area->num_niovs > binding->num_pages) {
		NL_SET_ERR_MSG(extack,
			       "The dma-buf mapping is larger than the dma-buf");
		return -EINVAL;
	}
	for (i = 0; i < area->num_niovs; i++)
		binding->free_niovs[binding->num_free++] = &area->niovs[i];
	return 0;
}

/* Splits one mapped scatter entry into net_iovs and adds them to the free
 * stack (RX) or to the page-indexed vector (TX).
 */
static int net_devmem_add_chunk(struct net_devmem_dmabuf_binding *binding,
				dma_addr_t dma_addr, size_t len,
				unsigned long offset, int nid,
				struct netlink_ext_ack *extack)
{
	struct net_devmem_chunk_owner *owner;
	size_t i;

	/* The exporter's geometry is not trusted: a net_iov is one page. */
	if (!len || !PAGE_ALIGNED(len) || !PAGE_ALIGNED(dma_addr)) {
		NL_SET_ERR_MSG(extack,
			       "The dma-buf has a scatter entry that is not page aligned");
		return -EINVAL;
	}

	owner = kzalloc_node(sizeof(*owner), GFP_KERNEL_ACCOUNT, nid);
	if (!owner)
		return -ENOMEM;
	owner->area.base_virtual = offset;
	owner->area.num_niovs = len >> PAGE_SHIFT;
	owner->base_dma_addr = dma_addr;
	owner->binding = binding;
	owner->area.niovs = kvcalloc(owner->area.num_niovs,
				     sizeof(*owner->area.niovs),
				     GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL);
	if (!owner->area.niovs) {
		kfree(owner);
		return -ENOMEM;
	}
	for (i = 0; i < owner->area.num_niovs; i++) {
		owner->area.niovs[i].owner = &owner->area;
		owner->area.niovs[i].dma_addr = dma_addr + (i << PAGE_SHIFT);
	}
	list_add_tail(&owner->node, &binding->chunk_owners);

	if (binding->direction == DMA_TO_DEVICE)
		return net_devmem_tx_vec_add(binding, &owner->area, extack);
	return net_devmem_rx_free_add(binding, &owner->area, extack);
}

static void net_devmem_reverse(struct net_iov **niovs, unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n / 2; i++)
		swap(niovs[i], niovs[n - 1 - i]);
}

static int net_devmem_map_dmabuf(struct net_devmem_dmabuf_binding *binding,
				 struct netlink_ext_ack *extack)
{
	int nid = dev_to_node(&binding->dev->dev);
	unsigned long offset = 0;
	struct scatterlist *sg;
	struct net_iov **vec;
	unsigned int i;
	int err;

	binding->attachment = dma_buf_attach(binding->dmabuf,
					     binding->dev->dev.parent);
	if (IS_ERR(binding->attachment)) {
		err = PTR_ERR(binding->attachment);
		binding->attachment = NULL;
		NL_SET_ERR_MSG(extack, "Cannot attach the dma-buf to the device");
		return err;
	}

	binding->sgt = dma_buf_map_attachment(binding->attachment,
					      binding->direction);
	if (IS_ERR(binding->sgt)) {
		err = PTR_ERR(binding->sgt);
		binding->sgt = NULL;
		NL_SET_ERR_MSG(extack, "Cannot map the dma-buf for the device");
		return err;
	}

	/* either vector covers the dma-buf; the mapping must fit in it */
	binding->num_pages = binding->dmabuf->size >> PAGE_SHIFT;
	vec = kvcalloc(binding->num_pages, sizeof(*vec),
		       GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL);
	if (!vec)
		return -ENOMEM;
	if (binding->direction == DMA_TO_DEVICE)
		binding->tx_vec = vec;
	else
		binding->free_niovs = vec;

	for_each_sgtable_dma_sg(binding->sgt, sg, i) {
		err = net_devmem_add_chunk(binding, sg_dma_address(sg),
					   sg_dma_len(sg), offset, nid, extack);
		if (err)
			return err;
		offset += sg_dma_len(sg);
	}
	if (!offset) {
		NL_SET_ERR_MSG(extack, "The dma-buf mapping is empty");
		return -EINVAL;
	}
	binding->size = offset;
	binding->num_pages = offset >> PAGE_SHIFT;
	/* the page pool takes the lowest offsets first */
	if (binding->free_niovs)
		net_devmem_reverse(binding->free_niovs, binding->num_free);
	return 0;
}

/**
 * net_devmem_bind_dmabuf() - map a dma-buf for a network device
 * @dev: the device; RTNL held
 * @direction: DMA_FROM_DEVICE for an RX binding, DMA_TO_DEVICE for TX
 * @dmabuf_fd: file descriptor of the dma-buf, in the caller's fd table
 * @owner_sk: the netlink socket the binding belongs to (it is held)
 * @owner_portid: port id of that socket
 * @extack: where to say why it failed
 *
 * The binding also records the calling task's credentials: whose TX
 * binding it is (net_devmem_get_tx_binding()).
 *
 * Return: a binding with an id and one reference (the owner's), not yet
 * used by any queue or socket; or an ERR_PTR.
 */
struct net_devmem_dmabuf_binding *
net_devmem_bind_dmabuf(struct net_device *dev,
		       enum dma_data_direction direction,
		       unsigned int dmabuf_fd, struct sock *owner_sk,
		       u32 owner_portid, struct netlink_ext_ack *extack)
{
	struct net_devmem_dmabuf_binding *binding;
	struct dma_buf *dmabuf;
	int err;

	ASSERT_RTNL();
	dmabuf = dma_buf_get(dmabuf_fd);
	if (IS_ERR(dmabuf)) {
		NL_SET_ERR_MSG(extack, "The file descriptor is not a dma-buf");
		return ERR_CAST(dmabuf);
	}

	binding = kzalloc_node(sizeof(*binding), GFP_KERNEL_ACCOUNT,
			       dev_to_node(&dev->dev));
	if (!binding) {
		dma_buf_put(dmabuf);
		return ERR_PTR(-ENOMEM);
	}
	binding->dmabuf = dmabuf;
	binding->direction = direction;
	INIT_WORK(&binding->free_work, net_devmem_dmabuf_binding_free_work);
	INIT_LIST_HEAD(&binding->unbound_node);
	binding->dev = dev;
	netdev_hold(dev, &binding->dev_tracker, GFP_KERNEL);
	refcount_set(&binding->ref, 1);
	xa_init(&binding->bound_rxqs);
	spin_lock_init(&binding->free_lock);
	INIT_LIST_HEAD(&binding->chunk_owners);
	binding->owner_net = sock_net(owner_sk);
	binding->owner_portid = owner_portid;
	sock_hold(owner_sk);
	binding->owner_sk = owner_sk;
	binding->owner_cred = get_current_cred();

	err = net_devmem_map_dmabuf(binding, extack);
	if (err)
		goto err_free;

	err = xa_alloc_cyclic(&net_devmem_dmabuf_bindings, &binding->id,
			      binding, xa_limit_32b, &net_devmem_next_id,
			      GFP_KERNEL);
	if (err < 0)
		goto err_free;

	return binding;

err_free:
	net_devmem_release_dev(binding);
	net_devmem_dmabuf_binding_free(binding);
	return ERR_PTR(err);
}

/**
 * net_devmem_bind_dmabuf_to_queue() - use a binding as an RX queue's memory
 * @dev: the device the binding was made for; RTNL held
 * @rxq_idx: index of the RX queue
 * @binding: the binding
 * @extack: where to say why it failed
 *
 * Installs the dma-buf memory provider on the queue and restarts it, so
 * the driver's new page pool hands out the binding's net_iovs.
 *
 * Return: 0, or a negative errno with the queue left as it was.
 */
int net_devmem_bind_dmabuf_to_queue(struct net_device *dev, u32 rxq_idx,
				    struct net_devmem_dmabuf_binding *binding,
				    struct netlink_ext_ack *extack)
{
	struct pp_memory_provider_params mp_params = {
		.mp_ops = &dmabuf_devmem_ops,
		.mp_priv = binding,
	};
	int err;

	ASSERT_RTNL();
	if (dev != binding->dev) {
		NL_SET_ERR_MSG(extack, "The dma-buf is bound to another device");
		return -EINVAL;
	}
	err = xa_insert(&binding->bound_rxqs, rxq_idx, xa_mk_value(rxq_idx),
			GFP_KERNEL);
	if (err == -EBUSY) {
		NL_SET_ERR_MSG(extack, "An RX queue is listed twice");
		return -EINVAL;
	}
	if (err)
		return err;

	err = net_mp_open_rxq(dev, rxq_idx, &mp_params, extack);
	if (err)
		xa_erase(&binding->bound_rxqs, rxq_idx);
	return err;
}

/**
 * net_devmem_unbind_owner() - unbind what a netlink socket bound
 * @net: the socket's network namespace
 * @portid: the socket's port id
 *
 * Called when a netlink socket is released (also when its process dies):
 * every binding it made is unbound. The port id was given up before this
 * runs, and a new socket may already hold it and have made bindings of
 * its own: only bindings whose socket is dead (orphaned by its release)
 * go. Takes RTNL.
 */
void net_devmem_unbind_owner(struct net *net, u32 portid)
{
	struct net_devmem_dmabuf_binding *binding;
	unsigned long id;

	if (xa_empty(&net_devmem_dmabuf_bindings))
		return;

	rtnl_lock();
	xa_for_each(&net_devmem_dmabuf_bindings, id, binding) {
		if (binding->owner_portid == portid &&
		    net_eq(binding->owner_net, net) &&
		    sock_flag(binding->owner_sk, SOCK_DEAD) &&
		    !binding->leaving)
			net_devmem_unbind_dmabuf(binding);
	}
	rtnl_unlock();
}

/**
 * net_devmem_rxq_binding_id() - id of the dma-buf bound to an RX queue
 * @rxq: the queue; RTNL held
 *
 * Return: the binding id, or 0 when the queue uses host memory.
 */
u32 net_devmem_rxq_binding_id(struct netdev_rx_queue *rxq)
{
	struct net_devmem_dmabuf_binding *binding;

	ASSERT_RTNL();
	if (rxq->mp_params.mp_ops != &dmabuf_devmem_ops)
		return 0;
	binding = rxq->mp_params.mp_priv;
	return binding->id;
}

/* A device going away takes its bindings' mappings with it: its queues
 * are already stopped and its TX rings empty, so nothing is restarted and
 * nothing reads the memory any more; sockets that still hold net_iovs
 * keep the binding (not the device) alive, and their skbs are dropped
 * before a driver sees them (net_devmem_tx_skb_ok()).
 */
static int net_devmem_netdev_event(struct notifier_block *nb,
				   unsigned long event, void *ptr)
{
	struct net_device *dev = netdev_notifier_info_to_dev(ptr);
	struct net_devmem_dmabuf_binding *binding;
	unsigned long id;

	if (event != NETDEV_UNREGISTER)
		return NOTIFY_DONE;

	xa_for_each(&net_devmem_dmabuf_bindings, id, binding) {
		if (binding->dev != dev)
			continue;
		net_devmem_unbind_queues(binding);
		net_devmem_release_dev(binding);
		/* unbound already, it waited for its queues: they are gone */
		if (binding->leaving) {
			list_del_init(&binding->unbound_node);
			binding->leaving = false;
			net_devmem_unbind_finish(binding);
		}
	}
	list_for_each_entry(binding, &net_devmem_unbound, unbound_node)
		if (binding->dev == dev)
			net_devmem_release_dev(binding);
	return NOTIFY_OK;
}

static struct notifier_block net_devmem_netdev_nb = {
	.notifier_call = net_devmem_netdev_event,
};

/* ---- the page pool memory provider ---------------------------------- */

static int mp_dmabuf_devmem_init(struct page_pool *pool)
{
	struct net_devmem_dmabuf_binding *binding = pool->mp_priv;

	/* A net_iov is one page: no compound buffers. */
	if (pool->p.order)
		return -E2BIG;
	if (pool->p.pool_size > binding->num_pages)
		return -ENOSPC;
	net_devmem_dmabuf_binding_get(binding);
	return 0;
}

static struct net_iov *mp_dmabuf_devmem_alloc(struct page_pool *pool,
					      gfp_t gfp)
{
	struct net_devmem_dmabuf_binding *binding = pool->mp_priv;
	struct net_iov *niov = NULL;

	spin_lock_bh(&binding->free_lock);
	if (binding->num_free)
		niov = binding->free_niovs[--binding->num_free];
	spin_unlock_bh(&binding->free_lock);
	return niov;
}

static void mp_dmabuf_devmem_release(struct page_pool *pool,
				     struct net_iov *niov)
{
	struct net_devmem_dmabuf_binding *binding = pool->mp_priv;

	spin_lock_bh(&binding->free_lock);
	/* never more than the pages that were put there at bind time */
	if (!WARN_ON_ONCE(binding->num_free >= binding->num_pages))
		binding->free_niovs[binding->num_free++] = niov;
	spin_unlock_bh(&binding->free_lock);
}

static void mp_dmabuf_devmem_destroy(struct page_pool *pool)
{
	net_devmem_dmabuf_binding_put(pool->mp_priv);
}

static const struct memory_provider_ops dmabuf_devmem_ops = {
	.init			= mp_dmabuf_devmem_init,
	.destroy		= mp_dmabuf_devmem_destroy,
	.alloc			= mp_dmabuf_devmem_alloc,
	.release		= mp_dmabuf_devmem_release,
};

/**
 * net_devmem_iov_binding_id() - id of the dma-buf binding of a net_iov
 * @niov: a net_iov a page pool handed out (held by the caller)
 *
 * Return: the id of the binding whose dma-buf @niov is a page of, or 0
 * when @niov comes from another memory provider.
 */
u32 net_devmem_iov_binding_id(const struct net_iov *niov)
{
	struct page_pool *pool = READ_ONCE(niov->pp);

	if (!pool || pool->mp_ops != &dmabuf_devmem_ops)
		return 0;
	return net_iov_binding(niov)->id;
}

/**
 * net_devmem_pool_binding_id() - the binding a page pool takes buffers from
 * @pool: the pool
 *
 * Return: the binding's id, or 0 when the pool has no dma-buf provider.
 */
u32 net_devmem_pool_binding_id(const struct page_pool *pool)
{
	const struct net_devmem_dmabuf_binding *binding;

	if (pool->mp_ops != &dmabuf_devmem_ops)
		return 0;
	binding = pool->mp_priv;
	return binding->id;
}

/* ---- transmit --------------------------------------------------------- */

/* May the current task send from @binding? Its owner may: the same
 * effective user in the same user namespace as the task that bound it;
 * so may a task with CAP_NET_ADMIN in the owner's user namespace (the
 * binding's network namespace is the sender's, checked by the caller).
 */
static bool net_devmem_tx_allowed(const struct net_devmem_dmabuf_binding *binding)
{
	const struct cred *owner = binding->owner_cred;
	const struct cred *cred = current_cred();

	if (cred->user_ns == owner->user_ns && uid_eq(cred->euid, owner->euid))
		return true;
	/* Privilege over the owner, not only over the namespace: root of a
	 * container's user namespace administers the container's network
	 * namespace, but must not send what host root bound in it.
	 */
	return ns_capable_noaudit(owner->user_ns, CAP_NET_ADMIN);
}

/**
 * net_devmem_get_tx_binding() - find a TX binding by id and hold it
 * @net: network namespace of the sending socket
 * @id: the id bind-tx returned
 *
 * A TX binding lets the NIC read a dma-buf on behalf of the user that
 * bound it: another user's task may not send from it.
 *
 * Return: the binding with a reference the caller drops with
 * net_devmem_dmabuf_binding_put(); ERR_PTR(-EINVAL) when @id names no
 * binding, an RX binding, one made from another network namespace, or
 * one that is being unbound; ERR_PTR(-EPERM) when the binding belongs to
 * another user and the caller lacks CAP_NET_ADMIN in that user's user
 * namespace.
 */
struct net_devmem_dmabuf_binding *net_devmem_get_tx_binding(struct net *net,
							    u32 id)
{
	struct net_devmem_dmabuf_binding *binding;

	rcu_read_lock();
	binding = xa_load(&net_devmem_dmabuf_bindings, id);
	if (binding && (binding->direction != DMA_TO_DEVICE ||
			!net_eq(binding->owner_net, net) ||
			!refcount_inc_not_zero(&binding->ref)))
		binding = NULL;
	rcu_read_unlock();
	if (!binding)
		return ERR_PTR(-EINVAL);
	if (!net_devmem_tx_allowed(binding)) {
		net_devmem_dmabuf_binding_put(binding);
		return ERR_PTR(-EPERM);
	}
	return binding;
}

/**
 * net_devmem_tx_niov() - the net_iov holding a byte of a TX binding
 * @binding: the TX binding
 * @offset: offset of the byte in the dma-buf
 *
 * Return: the net_iov of the page containing @offset, or NULL when
 * @offset is not inside the mapped dma-buf.
 */
struct net_iov *net_devmem_tx_niov(struct net_devmem_dmabuf_binding *binding,
				   u64 offset)
{
	u64 idx = offset >> PAGE_SHIFT;

	if (idx >= binding->num_pages)
		return NULL;
	return binding->tx_vec[idx];
}

/**
 * net_devmem_tx_iov_get() - take a reference on a TX net_iov
 * @niov: a net_iov of a TX binding, already referenced by the caller
 *
 * A TX net_iov has no page pool: a reference on it (an skb fragment) is
 * a reference on its binding, which keeps the dma-buf mapped. Exported
 * like net_iov_put(): skb_frag_ref() reaches it from any module.
 */
void net_devmem_tx_iov_get(struct net_iov *niov)
{
	net_devmem_dmabuf_binding_get(net_iov_binding(niov));
}
EXPORT_SYMBOL(net_devmem_tx_iov_get);

/**
 * net_devmem_tx_iov_put() - drop a reference on a TX net_iov
 * @niov: the net_iov
 *
 * May be called in any context; the binding may be freed with it.
 */
void net_devmem_tx_iov_put(struct net_iov *niov)
{
	net_devmem_dmabuf_binding_put(net_iov_binding(niov));
}

/**
 * net_devmem_tx_skb_ok() - may @dev transmit the fragments of @skb?
 * @skb: an skb whose fragments are not all readable
 * @dev: the device about to transmit it
 *
 * Device memory is mapped for one device only: every net_iov fragment
 * must belong to a TX binding of @dev that is still mapped. Anything else
 * (an RX net_iov forwarded, a route that changed after sendmsg(), a
 * device that went away) is dropped by the caller.
 *
 * Return: true when every fragment is host memory or device memory
 * mapped for @dev.
 */
bool net_devmem_tx_skb_ok(const struct sk_buff *skb,
			  const struct net_device *dev)
{
	const struct skb_shared_info *shinfo = skb_shinfo(skb);
	struct net_devmem_dmabuf_binding *binding;
	const struct net_iov *niov;
	int i;

	if (skb_has_frag_list(skb))
		return false;
	for (i = 0; i < shinfo->nr_frags; i++) {
		niov = skb_frag_net_iov(&shinfo->frags[i]);
		if (!niov)
			continue;
		if (niov->pp)
			return false;
		binding = net_iov_binding(niov);
		if (READ_ONCE(binding->dev) != dev)
			return false;
	}
	return true;
}

/* The dma-buf offset and length of the iterator's current segment. */
static bool net_devmem_iter_segment(const struct iov_iter *from, u64 *offset,
				    size_t *len)
{
	if (iter_is_ubuf(from)) {
		*offset = (unsigned long)from->ubuf + from->iov_offset;
		*len = iov_iter_count(from);
		return true;
	}
	if (!iter_is_iovec(from) || !from->nr_segs)
		return false;
	*offset = (unsigned long)from->iov->iov_base + from->iov_offset;
	*len = min(iov_iter_count(from), from->iov->iov_len - from->iov_offset);
	return true;
}

/* Appends @len bytes at @offset of the dma-buf to @skb, in place when the
 * last fragment ends right there. Return: bytes added, or -EMSGSIZE when
 * @skb has no free fragment.
 */
static int net_devmem_skb_add(struct sk_buff *skb, struct net_iov *niov,
			      unsigned int pg_off, unsigned int len)
{
	struct skb_shared_info *shinfo = skb_shinfo(skb);
	int nr = shinfo->nr_frags;
	skb_frag_t *last;

	if (nr) {
		last = &shinfo->frags[nr - 1];
		if (skb_frag_net_iov(last) == niov &&
		    skb_frag_off(last) + skb_frag_size(last) == pg_off) {
			skb_frag_size_add(last, len);
			return len;
		}
	}
	if (nr >= MAX_SKB_FRAGS)
		return -EMSGSIZE;
	net_devmem_tx_iov_get(niov);
	__skb_fill_netmem_desc(skb, nr, net_iov_to_netmem(niov), pg_off, len);
	shinfo->nr_frags = nr + 1;
	return len;
}

/**
 * net_devmem_zerocopy_fill() - point skb fragments at a TX binding
 * @sk: the sending socket, locked
 * @skb: the skb being filled (in @sk's write queue)
 * @from: the sendmsg() iterator; each segment is {offset, length} in the
 *	dma-buf, not user memory
 * @length: bytes to add at most
 * @binding: the TX binding named by the sendmsg() cmsg
 *
 * Adds fragments referring to the binding's net_iovs (one reference on
 * the binding per fragment) and charges them to @sk as a zerocopy send
 * of user pages would be, so the send buffer limits device memory in
 * flight too. The iterator advances by what was added.
 *
 * Return: 0 when @length bytes (or all that was left) were added;
 * -EMSGSIZE when @skb ran out of fragments; -EFAULT for a range outside
 * the dma-buf.
 */
int net_devmem_zerocopy_fill(struct sock *sk, struct sk_buff *skb,
			     struct iov_iter *from, size_t length,
			     struct net_devmem_dmabuf_binding *binding)
{
	unsigned int pg_off, chunk;
	struct net_iov *niov;
	size_t seg_len;
	u64 offset;
	int added;

	while (length && iov_iter_count(from)) {
		if (!net_devmem_iter_segment(from, &offset, &seg_len))
			return -EFAULT;
		if (!seg_len) {
			/* skips the empty segment */
			iov_iter_advance(from, 0);
			continue;
		}
		niov = net_devmem_tx_niov(binding, offset);
		if (!niov)
			return -EFAULT;
		pg_off = offset & ~PAGE_MASK;
		chunk = min3(length, seg_len, (size_t)(PAGE_SIZE - pg_off));

		added = net_devmem_skb_add(skb, niov, pg_off, chunk);
		if (added < 0)
			return added;
		skb->len += added;
		skb->data_len += added;
		skb->truesize += added;
		sk_wmem_queued_add(sk, added);
		if (!skb_zcopy_pure(skb))
			sk_mem_charge(sk, added);
		iov_iter_advance(from, added);
		length -= added;
	}
	return 0;
}

/**
 * net_devmem_tx_check_iter() - are all of a sendmsg()'s ranges in the dma-buf?
 * @binding: the TX binding
 * @from: the sendmsg() iterator, not yet advanced
 *
 * Checked before anything is queued, so that a bad range fails the call
 * without sending the ranges before it.
 *
 * Return: 0, or -EFAULT when a range ends past the mapped dma-buf (or the
 * iterator is not made of iovecs).
 */
int net_devmem_tx_check_iter(struct net_devmem_dmabuf_binding *binding,
			     const struct iov_iter *from)
{
	u64 offset, len;
	unsigned long i;

	if (iter_is_ubuf(from)) {
		offset = (unsigned long)from->ubuf;
		len = iov_iter_count(from);
		return offset + len < offset || offset + len > binding->size ?
		       -EFAULT : 0;
	}
	if (!iter_is_iovec(from))
		return -EFAULT;
	for (i = 0; i < from->nr_segs; i++) {
		offset = (unsigned long)from->iov[i].iov_base;
		len = from->iov[i].iov_len;
		if (len && (offset >= binding->size ||
			    len > binding->size - offset))
			return -EFAULT;
	}
	return 0;
}

static int __init net_devmem_init(void)
{
	return register_netdevice_notifier(&net_devmem_netdev_nb);
}
subsys_initcall(net_devmem_init);
