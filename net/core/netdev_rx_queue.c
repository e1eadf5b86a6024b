// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Restarting one RX queue of a running device, and installing or removing
 * a page pool memory provider on it.
 */

#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <linux/slab.h>
#include <net/netdev_queues.h>
#include <net/netlink.h>

static bool netdev_queue_mgmt_ops_complete(const struct netdev_queue_mgmt_ops *qops)
{
	return qops && qops->ndo_queue_mem_alloc && qops->ndo_queue_mem_free &&
	       qops->ndo_queue_start && qops->ndo_queue_stop;
}

/* A restart swaps the memory an RX queue runs on: @fresh is allocated
 * while the queue runs, the queue's running memory is taken into
 * @current_mem when it stops, and whichever the queue does not run on
 * afterwards is freed. Both are the driver's per-queue memory descriptors.
 */
struct netdev_rxq_swap {
	const struct netdev_queue_mgmt_ops *qops;
	struct net_device *dev;
	unsigned int idx;
	void *fresh;
	void *current_mem;
};

/* Allocates both descriptors and the fresh memory. */
static int netdev_rxq_swap_prepare(struct netdev_rxq_swap *swap)
{
	size_t size = swap->qops->ndo_queue_mem_size;

	swap->fresh = kvzalloc(size, GFP_KERNEL);
	swap->current_mem = kvzalloc(size, GFP_KERNEL);
	if (!swap->fresh || !swap->current_mem)
		return -ENOMEM;
	return swap->qops->ndo_queue_mem_alloc(swap->dev, swap->fresh,
					       swap->idx);
}

/* Frees the descriptors; @drop_fresh and @drop_current say whose memory
 * the driver must free first.
 */
static void netdev_rxq_swap_release(struct netdev_rxq_swap *swap,
				    bool drop_fresh, bool drop_current)
{
	if (drop_fresh)
		swap->qops->ndo_queue_mem_free(swap->dev, swap->fresh);
	if (drop_current)
		swap->qops->ndo_queue_mem_free(swap->dev, swap->current_mem);
	kvfree(swap->fresh);
	kvfree(swap->current_mem);
}

/* Stops the queue and starts it on the fresh memory; if that fails, starts
 * it again on what it ran on. Returns which memory the queue runs on
 * through @on_fresh, and whether it runs at all.
 *
 * A stop that fails leaves the queue running on its memory, which the
 * device may still be writing into: the driver keeps all of it, and
 * @current_mem stays empty. Only the fresh memory is to be freed then,
 * and the queue is as it was.
 */
static int netdev_rxq_swap_commit(struct netdev_rxq_swap *swap,
				  bool *on_fresh, bool *running,
				  struct netlink_ext_ack *extack)
{
	const struct netdev_queue_mgmt_ops *qops = swap->qops;
	int err;

	*on_fresh = false;
	*running = true;
	err = qops->ndo_queue_stop(swap->dev, swap->current_mem, swap->idx);
	if (err) {
		NL_SET_ERR_MSG(extack, "The RX queue did not stop; it runs on its old memory");
		return err;
	}
	err = qops->ndo_queue_start(swap->dev, swap->fresh, swap->idx);
	if (!err) {
		*on_fresh = true;
		return 0;
	}
	NL_SET_ERR_MSG(extack, "The RX queue did not start on its new memory");
	/* it ran on this memory a moment ago */
	if (qops->ndo_queue_start(swap->dev, swap->current_mem, swap->idx)) {
		netdev_err(swap->dev, "RX queue %u did not restart on its old memory, reset the device\n",
			   swap->idx);
		*running = false;
	}
	return err;
}

/* netdev_rx_queue_restart(), saying in @extack what failed. */
static int netdev_rx_queue_swap(struct net_device *dev, unsigned int rxq_idx,
				struct netlink_ext_ack *extack)
{
	struct netdev_rxq_swap swap = {
		.qops = dev->queue_mgmt_ops,
		.dev = dev,
		.idx = rxq_idx,
	};
	bool on_fresh, running;
	int err;

	ASSERT_RTNL();
	if (!netdev_queue_mgmt_ops_complete(swap.qops)) {
		NL_SET_ERR_MSG(extack, "The driver cannot restart a single RX queue");
		return -EOPNOTSUPP;
	}
	if (!netif_running(dev))
		return 0;

	err = netdev_rxq_swap_prepare(&swap);
	if (err) {
		NL_SET_ERR_MSG(extack, "The driver could not set up the RX queue's new memory");
		/* the driver frees what a failed allocation left */
		netdev_rxq_swap_release(&swap, false, false);
		return err;
	}
	err = netdev_rxq_swap_commit(&swap, &on_fresh, &running, extack);
	/* Free the memory the queue does not run on: the fresh memory when
	 * the queue did not stop or went back to its old memory, the old
	 * memory when it runs on the fresh one, both when it runs on none.
	 */
	netdev_rxq_swap_release(&swap, !on_fresh, on_fresh || !running);
	return err;
}

/**
 * netdev_rx_queue_restart() - give one RX queue fresh memory
 * @dev: the device; RTNL held
 * @rxq_idx: index of the RX queue
 *
 * Allocates new memory for the queue (the driver's new page pool takes
 * whatever memory provider the queue has now), stops the queue, starts it
 * on the new memory and frees the old. If the queue does not start on the
 * new memory it is started again on the old one. If it does not stop (the
 * device may still write into its buffers), it runs on as before and only
 * the new memory is freed. Other queues are not touched. A device that is
 * down has nothing to restart.
 *
 * Return: 0, or a negative errno with the queue running as before.
 */
int netdev_rx_queue_restart(struct net_device *dev, unsigned int rxq_idx)
{
	return netdev_rx_queue_swap(dev, rxq_idx, NULL);
}

/* Can a memory provider be installed on RX queue @rxq_idx of @dev? */
static int netdev_rxq_check_mp_target(struct net_device *dev,
				      unsigned int rxq_idx,
				      struct netlink_ext_ack *extack)
{
	struct netdev_rx_queue *rxq;

	if (!netdev_queue_mgmt_ops_complete(dev->queue_mgmt_ops)) {
		NL_SET_ERR_MSG(extack, "The driver cannot restart a single RX queue");
		return -EOPNOTSUPP;
	}
	if (rxq_idx >= dev->real_num_rx_queues) {
		NL_SET_ERR_MSG(extack, "RX queue index out of range");
		return -EINVAL;
	}
	if (!netif_running(dev)) {
		NL_SET_ERR_MSG(extack, "The device is down");
		return -ENETDOWN;
	}
	if (dev_xdp_prog_count(dev)) {
		NL_SET_ERR_MSG(extack, "unable to bind dmabuf to device with XDP program attached");
		return -EEXIST;
	}
	rxq = __netif_get_rx_queue(dev, rxq_idx);
	if (rxq->mp_params.mp_ops) {
		NL_SET_ERR_MSG(extack, "The RX queue already has a memory provider");
		return -EEXIST;
	}
#ifdef CONFIG_XDP_SOCKETS
	if (rxq->pool) {
		NL_SET_ERR_MSG(extack, "The RX queue is used by AF_XDP");
		return -EBUSY;
	}
#endif
	return 0;
}

/**
 * net_mp_open_rxq() - install a memory provider on an RX queue
 * @dev: the device; RTNL held
 * @rxq_idx: index of the RX queue
 * @p: the provider and its data
 * @extack: where to say why it failed
 *
 * Return: 0 when the queue runs on the provider's memory, or a negative
 * errno with the queue unchanged.
 */
int net_mp_open_rxq(struct net_device *dev, unsigned int rxq_idx,
		    const struct pp_memory_provider_params *p,
		    struct netlink_ext_ack *extack)
{
	struct netdev_rx_queue *rxq;
	int err;

	ASSERT_RTNL();
	err = netdev_rxq_check_mp_target(dev, rxq_idx, extack);
	if (err)
		return err;

	rxq = __netif_get_rx_queue(dev, rxq_idx);
	rxq->mp_params = *p;
	rxq->mp_params.pools_attached = 0;
	/* a failed restart leaves the queue on its old memory and has said
	 * in @extack which step failed
	 */
	err = netdev_rx_queue_swap(dev, rxq_idx, extack);
	if (!err && !rxq->mp_params.pools_attached) {
		/* the queue runs on the new page pool, i.e. host memory */
		NL_SET_ERR_MSG(extack, "The driver's page pool did not take the memory provider");
		err = -ENODATA;
	}
	/* the provider is the queue's only if the queue runs on it */
	if (err)
		memset(&rxq->mp_params, 0, sizeof(rxq->mp_params));
	return err;
}

/**
 * net_mp_close_rxq() - return an RX queue to host memory
 * @dev: the device; RTNL held
 * @rxq_idx: index of the RX queue
 * @old_p: the provider installed by net_mp_open_rxq()
 *
 * The queue is restarted (when the device runs) on page allocator memory.
 * Buffers of the provider still held elsewhere (sockets) stay valid: the
 * old page pool lives until they come back.
 *
 * The restart needs memory for the queue's new ring, and the queue must
 * stop. Without either, the queue goes on running, consistently, on the
 * provider's page pool, which keeps the provider's memory (and its
 * mapping) alive: nothing of it is freed while the device may write into
 * it. The provider stays the queue's (its parameters are put back), so
 * that whoever installed it knows the device still writes into its
 * memory and can try again (net_devmem_unbind_dmabuf() does, every
 * second).
 *
 * Return: 0 when the queue no longer uses the provider's memory, or the
 * negative errno of the failed restart when it still does.
 */
int net_mp_close_rxq(struct net_device *dev, unsigned int rxq_idx,
		     const struct pp_memory_provider_params *old_p)
{
	struct pp_memory_provider_params saved;
	struct netdev_rx_queue *rxq;
	int err;

	ASSERT_RTNL();
	if (WARN_ON_ONCE(rxq_idx >= dev->num_rx_queues))
		return -EINVAL;
	rxq = __netif_get_rx_queue(dev, rxq_idx);
	if (WARN_ON_ONCE(rxq->mp_params.mp_ops != old_p->mp_ops ||
			 rxq->mp_params.mp_priv != old_p->mp_priv))
		return -EINVAL;

	saved = rxq->mp_params;
	memset(&rxq->mp_params, 0, sizeof(rxq->mp_params));
	err = netdev_rx_queue_restart(dev, rxq_idx);
	if (err) {
		/* it runs on the provider's memory: say so */
		rxq->mp_params = saved;
		if (net_ratelimit())
			netdev_warn(dev, "RX queue %u still runs on its memory provider (%d)\n",
				    rxq_idx, err);
	}
	return err;
}

/**
 * netdev_has_mp_rxq() - does an RX queue of a device run on a memory provider?
 * @dev: the device, under RTNL
 *
 * Whatever would read or rewrite received payload in place (XDP) cannot
 * work on such a queue.
 *
 * Return: true when some RX queue of @dev has a memory provider.
 */
bool netdev_has_mp_rxq(const struct net_device *dev)
{
	unsigned int i;

	ASSERT_RTNL();
	for (i = 0; i < dev->num_rx_queues; i++)
		if (dev->_rx[i].mp_params.mp_ops)
			return true;
	return false;
}
