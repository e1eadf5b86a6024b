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

/**
 * netdev_rx_queue_restart() - give one RX queue fresh memory
 * @dev: the device; RTNL held
 * @rxq_idx: index of the RX queue
 *
 * Allocates new memory for the queue (the driver's new page pool takes
 * whatever memory provider the queue has now), stops the queue, starts it
 * on the new memory and frees the old. If the queue does not start on the
 * new memory it is started again on the old one. Other queues are not
 * touched. A device that is down has nothing to restart.
 *
 * Return: 0, or a negative errno with the queue running as before.
 */
int netdev_rx_queue_restart(struct net_device *dev, unsigned int rxq_idx)
{
	const struct netdev_queue_mgmt_ops *qops = dev->queue_mgmt_ops;
	void *new_mem, *old_mem;
	int err;

	ASSERT_RTNL();
	if (!netdev_queue_mgmt_ops_complete(qops))
		return -EOPNOTSUPP;
	if (!netif_running(dev))
		return 0;

	new_mem = kvzalloc(qops->ndo_queue_mem_size, GFP_KERNEL);
	old_mem = kvzalloc(qops->ndo_queue_mem_size, GFP_KERNEL);
	if (!new_mem || !old_mem) {
		err = -ENOMEM;
		goto out_free;
	}

	err = qops->ndo_queue_mem_alloc(dev, new_mem, rxq_idx);
	if (err)
		goto out_free;

	err = qops->ndo_queue_stop(dev, old_mem, rxq_idx);
	if (err)
		goto out_free_new;

	err = qops->ndo_queue_start(dev, new_mem, rxq_idx);
	if (err)
		goto out_restore_old;

	qops->ndo_queue_mem_free(dev, old_mem);
	kvfree(old_mem);
	kvfree(new_mem);
	return 0;

out_restore_old:
	/* It ran on this memory a moment ago. */
	if (qops->ndo_queue_start(dev, old_mem, rxq_idx)) {
		netdev_err(dev, "RX queue %u did not restart on its old memory, reset the device\n",
			   rxq_idx);
		qops->ndo_queue_mem_free(dev, old_mem);
	}
out_free_new:
	qops->ndo_queue_mem_free(dev, new_mem);
out_free:
	kvfree(old_mem);
	kvfree(new_mem);
	return err;
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

	rxq->mp_params = *p;
	rxq->mp_params.pools_attached = 0;
	err = netdev_rx_queue_restart(dev, rxq_idx);
	if (err) {
		NL_SET_ERR_MSG(extack, "The driver could not restart the RX queue");
		goto err_clear;
	}
	if (!rxq->mp_params.pools_attached) {
		/* the queue runs on the new page pool, i.e. host memory */
		NL_SET_ERR_MSG(extack, "The driver's page pool did not take the memory provider");
		err = -ENODATA;
		goto err_clear;
	}
	return 0;

err_clear:
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
 * The restart needs memory for the queue's new ring. Without it the queue
 * goes on running, consistently, on the provider's page pool, which keeps
 * the provider's memory (and its mapping) alive; the provider is no longer
 * the queue's, so the queue leaves it the next time the driver rebuilds
 * its rings (the device going down and up, a ring size change).
 *
 * Return: 0 when the queue no longer uses the provider's memory, or the
 * negative errno of the failed restart when it still does.
 */
int net_mp_close_rxq(struct net_device *dev, unsigned int rxq_idx,
		     const struct pp_memory_provider_params *old_p)
{
	struct netdev_rx_queue *rxq;
	int err;

	ASSERT_RTNL();
	if (WARN_ON_ONCE(rxq_idx >= dev->num_rx_queues))
		return -EINVAL;
	rxq = __netif_get_rx_queue(dev, rxq_idx);
	if (WARN_ON_ONCE(rxq->mp_params.mp_ops != old_p->mp_ops ||
			 rxq->mp_params.mp_priv != old_p->mp_priv))
		return -EINVAL;

	memset(&rxq->mp_params, 0, sizeof(rxq->mp_params));
	err = netdev_rx_queue_restart(dev, rxq_idx);
	if (err)
		netdev_warn(dev, "RX queue %u still runs on its old memory provider (%d) until the device is reset\n",
			    rxq_idx, err);
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
