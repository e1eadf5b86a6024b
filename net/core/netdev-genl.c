// SPDX-License-Identifier: GPL-2.0-only
/*
 * The "netdev" generic netlink family (Documentation/netlink/specs/netdev.yaml):
 * devices, their queues, and binding dma-bufs to RX queues or for
 * transmit (devmem TCP).
 */

#include <linux/netdevice.h>
#include <linux/notifier.h>
#include <linux/rtnetlink.h>
#include <net/genetlink.h>
#include <net/net_namespace.h>
#include <net/netdev_queues.h>
#include <net/netlink.h>
#include <net/sock.h>
#include <linux/ethtool.h>
#include <linux/ethtool_netlink.h>
#include <uapi/linux/netdev.h>

#include "devmem.h"

static struct genl_family netdev_nl_family;

/* ---- policies ---------------------------------------------------------- */

static const struct nla_policy netdev_dev_get_nl_policy[NETDEV_A_DEV_IFINDEX + 1] = {
	[NETDEV_A_DEV_IFINDEX] = NLA_POLICY_MIN(NLA_U32, 1),
};

static const struct nla_policy netdev_queue_get_nl_policy[NETDEV_A_QUEUE_TYPE + 1] = {
	[NETDEV_A_QUEUE_ID] = { .type = NLA_U32, },
	[NETDEV_A_QUEUE_IFINDEX] = NLA_POLICY_MIN(NLA_U32, 1),
	[NETDEV_A_QUEUE_TYPE] = NLA_POLICY_MAX(NLA_U32, NETDEV_QUEUE_TYPE_TX),
};

/* One entry of NETDEV_A_DMABUF_QUEUES. */
static const struct nla_policy netdev_queue_id_nl_policy[NETDEV_A_QUEUE_TYPE + 1] = {
	[NETDEV_A_QUEUE_ID] = { .type = NLA_U32, },
	[NETDEV_A_QUEUE_TYPE] = NLA_POLICY_MAX(NLA_U32, NETDEV_QUEUE_TYPE_TX),
};

static const struct nla_policy netdev_bind_rx_nl_policy[NETDEV_A_DMABUF_FD + 1] = {
	[NETDEV_A_DMABUF_IFINDEX] = NLA_POLICY_MIN(NLA_U32, 1),
	[NETDEV_A_DMABUF_QUEUES] = NLA_POLICY_NESTED(netdev_queue_id_nl_policy),
	[NETDEV_A_DMABUF_FD] = { .type = NLA_U32, },
};

/* bind-tx names no queue: a queue list is rejected as unknown. */
static const struct nla_policy netdev_bind_tx_nl_policy[NETDEV_A_DMABUF_FD + 1] = {
	[NETDEV_A_DMABUF_IFINDEX] = NLA_POLICY_MIN(NLA_U32, 1),
	[NETDEV_A_DMABUF_FD] = { .type = NLA_U32, },
};

/* ---- dev-get ------------------------------------------------------------ */

static int netdev_nl_dev_fill(struct sk_buff *rsp, struct net_device *netdev,
			      u32 portid, u32 seq, int flags)
{
	void *hdr;

	hdr = genlmsg_put(rsp, portid, seq, &netdev_nl_family, flags,
			  NETDEV_CMD_DEV_GET);
	if (!hdr)
		return -EMSGSIZE;
	if (nla_put_u32(rsp, NETDEV_A_DEV_IFINDEX, netdev->ifindex)) {
		genlmsg_cancel(rsp, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(rsp, hdr);
	return 0;
}

static int netdev_nl_dev_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct net_device *netdev;
	struct sk_buff *rsp;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, NETDEV_A_DEV_IFINDEX))
		return -EINVAL;

	rsp = genlmsg_new(GENLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!rsp)
		return -ENOMEM;

	rtnl_lock();
	netdev = __dev_get_by_index(genl_info_net(info),
				    nla_get_u32(info->attrs[NETDEV_A_DEV_IFINDEX]));
	if (netdev) {
		err = netdev_nl_dev_fill(rsp, netdev, info->snd_portid,
					 info->snd_seq, 0);
	} else {
		NL_SET_BAD_ATTR(info->extack, info->attrs[NETDEV_A_DEV_IFINDEX]);
		err = -ENODEV;
	}
	rtnl_unlock();

	if (err) {
		nlmsg_free(rsp);
		return err;
	}
	return genlmsg_reply(rsp, info);
}

/* The device of @net with the lowest ifindex not below @ifindex, or NULL.
 * 6.1 lists a namespace's devices in the order they were registered, not
 * by ifindex (a device can be created with any free ifindex), while a dump
 * resumes by ifindex: so dumps walk the devices in ifindex order. Needs
 * RTNL.
 */
static struct net_device *netdev_nl_dev_from(struct net *net,
					     unsigned long ifindex)
{
	struct net_device *netdev, *found = NULL;

	for_each_netdev(net, netdev)
		if (netdev->ifindex >= ifindex &&
		    (!found || netdev->ifindex < found->ifindex))
			found = netdev;
	return found;
}

static int netdev_nl_dev_get_dumpit(struct sk_buff *skb,
				    struct netlink_callback *cb)
{
	struct net *net = sock_net(skb->sk);
	struct net_device *netdev;
	int err = 0;

	rtnl_lock();
	for (netdev = netdev_nl_dev_from(net, cb->args[0]); netdev;
	     netdev = netdev_nl_dev_from(net, netdev->ifindex + 1UL)) {
		err = netdev_nl_dev_fill(skb, netdev,
					 NETLINK_CB(cb->skb).portid,
					 cb->nlh->nlmsg_seq, NLM_F_MULTI);
		if (err < 0)
			break;
		cb->args[0] = netdev->ifindex + 1;
	}
	rtnl_unlock();

	return err == -EMSGSIZE ? skb->len : err;
}

/* ---- queue-get ---------------------------------------------------------- */

static int netdev_nl_queue_fill(struct sk_buff *rsp, struct net_device *netdev,
				u32 q_idx, u32 q_type, u32 portid, u32 seq,
				int flags)
{
	struct netdev_rx_queue *rxq;
	u32 dmabuf_id;
	void *hdr;

	hdr = genlmsg_put(rsp, portid, seq, &netdev_nl_family, flags,
			  NETDEV_CMD_QUEUE_GET);
	if (!hdr)
		return -EMSGSIZE;

	if (nla_put_u32(rsp, NETDEV_A_QUEUE_ID, q_idx) ||
	    nla_put_u32(rsp, NETDEV_A_QUEUE_TYPE, q_type) ||
	    nla_put_u32(rsp, NETDEV_A_QUEUE_IFINDEX, netdev->ifindex))
		goto nla_put_failure;

	if (q_type == NETDEV_QUEUE_TYPE_RX) {
		rxq = __netif_get_rx_queue(netdev, q_idx);
		dmabuf_id = net_devmem_rxq_binding_id(rxq);
		if (dmabuf_id &&
		    nla_put_u32(rsp, NETDEV_A_QUEUE_DMABUF, dmabuf_id))
			goto nla_put_failure;
	}

	genlmsg_end(rsp, hdr);
	return 0;

nla_put_failure:
	genlmsg_cancel(rsp, hdr);
	return -EMSGSIZE;
}

static unsigned int netdev_nl_queue_count(const struct net_device *netdev,
					  u32 q_type)
{
	return q_type == NETDEV_QUEUE_TYPE_RX ? netdev->real_num_rx_queues :
						netdev->real_num_tx_queues;
}

static int netdev_nl_queue_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct net_device *netdev;
	u32 q_id, q_type, ifindex;
	struct sk_buff *rsp;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, NETDEV_A_QUEUE_ID) ||
	    GENL_REQ_ATTR_CHECK(info, NETDEV_A_QUEUE_TYPE) ||
	    GENL_REQ_ATTR_CHECK(info, NETDEV_A_QUEUE_IFINDEX))
		return -EINVAL;

	q_id = nla_get_u32(info->attrs[NETDEV_A_QUEUE_ID]);
	q_type = nla_get_u32(info->attrs[NETDEV_A_QUEUE_TYPE]);
	ifindex = nla_get_u32(info->attrs[NETDEV_A_QUEUE_IFINDEX]);

	rsp = genlmsg_new(GENLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!rsp)
		return -ENOMEM;

	rtnl_lock();
	netdev = __dev_get_by_index(genl_info_net(info), ifindex);
	if (!netdev) {
		NL_SET_BAD_ATTR(info->extack, info->attrs[NETDEV_A_QUEUE_IFINDEX]);
		err = -ENODEV;
	} else if (q_id >= netdev_nl_queue_count(netdev, q_type)) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[NETDEV_A_QUEUE_ID],
				    "No queue with this id");
		err = -EINVAL;
	} else {
		err = netdev_nl_queue_fill(rsp, netdev, q_id, q_type,
					   info->snd_portid, info->snd_seq, 0);
	}
	rtnl_unlock();

	if (err) {
		nlmsg_free(rsp);
		return err;
	}
	return genlmsg_reply(rsp, info);
}

/* Dumps the queues of one device, resuming at cb->args[1] (RX) and
 * cb->args[2] (TX).
 */
static int netdev_nl_queue_dump_one(struct net_device *netdev,
				    struct sk_buff *rsp,
				    struct netlink_callback *cb)
{
	int err;

	for (; cb->args[1] < netdev->real_num_rx_queues; cb->args[1]++) {
		err = netdev_nl_queue_fill(rsp, netdev, cb->args[1],
					   NETDEV_QUEUE_TYPE_RX,
					   NETLINK_CB(cb->skb).portid,
					   cb->nlh->nlmsg_seq, NLM_F_MULTI);
		if (err)
			return err;
	}
	for (; cb->args[2] < netdev->real_num_tx_queues; cb->args[2]++) {
		err = netdev_nl_queue_fill(rsp, netdev, cb->args[2],
					   NETDEV_QUEUE_TYPE_TX,
					   NETLINK_CB(cb->skb).portid,
					   cb->nlh->nlmsg_seq, NLM_F_MULTI);
		if (err)
			return err;
	}
	return 0;
}

static int netdev_nl_queue_get_dumpit(struct sk_buff *skb,
				      struct netlink_callback *cb)
{
	const struct genl_dumpit_info *dump = genl_dumpit_info(cb);
	struct net *net = sock_net(skb->sk);
	struct net_device *netdev;
	u32 ifindex = 0;
	int err = 0;

	if (dump->attrs[NETDEV_A_QUEUE_IFINDEX])
		ifindex = nla_get_u32(dump->attrs[NETDEV_A_QUEUE_IFINDEX]);

	rtnl_lock();
	if (ifindex) {
		netdev = __dev_get_by_index(net, ifindex);
		if (netdev)
			err = netdev_nl_queue_dump_one(netdev, skb, cb);
		else
			err = -ENODEV;
	} else {
		for (netdev = netdev_nl_dev_from(net, cb->args[0]); netdev;
		     netdev = netdev_nl_dev_from(net, netdev->ifindex + 1UL)) {
			if (netdev->ifindex > cb->args[0]) {
				cb->args[0] = netdev->ifindex;
				cb->args[1] = 0;
				cb->args[2] = 0;
			}
			err = netdev_nl_queue_dump_one(netdev, skb, cb);
			if (err)
				break;
		}
	}
	rtnl_unlock();

	return err == -EMSGSIZE ? skb->len : err;
}

/* ---- bind-rx ------------------------------------------------------------- */

/* Header split must be on: without it the NIC writes headers into the
 * dma-buf, where the stack cannot read them. And every frame must be split
 * at its payload (hds-thresh 0): a frame left whole in the header buffer
 * reaches the socket as readable bytes, which a devmem reader does not
 * expect.
 */
static int netdev_nl_check_data_split(struct net_device *netdev,
				      struct netlink_ext_ack *extack)
{
	struct kernel_ethtool_ringparam kernel_ring = {};
	struct ethtool_ringparam ring = {};

	if (!netdev->ethtool_ops || !netdev->ethtool_ops->get_ringparam) {
		NL_SET_ERR_MSG(extack, "The device cannot report tcp-data-split");
		return -EINVAL;
	}
	netdev->ethtool_ops->get_ringparam(netdev, &ring, &kernel_ring, extack);
	if (kernel_ring.tcp_data_split != ETHTOOL_TCP_DATA_SPLIT_ENABLED) {
		NL_SET_ERR_MSG(extack, "tcp-data-split is not enabled on the device");
		return -EINVAL;
	}
	if (kernel_ring.hds_thresh) {
		NL_SET_ERR_MSG(extack, "hds-thresh is not 0 on the device");
		return -EINVAL;
	}
	return 0;
}

/* Parses one NETDEV_A_DMABUF_QUEUES entry into an RX queue index. */
static int netdev_nl_parse_rx_queue(struct net_device *netdev,
				    const struct nlattr *nest, u32 *rxq_idx,
				    struct netlink_ext_ack *extack)
{
	struct nlattr *tb[ARRAY_SIZE(netdev_queue_id_nl_policy)];
	int err;

	err = nla_parse_nested(tb, ARRAY_SIZE(netdev_queue_id_nl_policy) - 1,
			       nest, netdev_queue_id_nl_policy, extack);
	if (err < 0)
		return err;

	if (NL_REQ_ATTR_CHECK(extack, nest, tb, NETDEV_A_QUEUE_ID) ||
	    NL_REQ_ATTR_CHECK(extack, nest, tb, NETDEV_A_QUEUE_TYPE))
		return -EINVAL;

	if (nla_get_u32(tb[NETDEV_A_QUEUE_TYPE]) != NETDEV_QUEUE_TYPE_RX) {
		NL_SET_ERR_MSG_ATTR(extack, tb[NETDEV_A_QUEUE_TYPE],
				    "Only RX queues can be bound to a dma-buf");
		return -EINVAL;
	}

	*rxq_idx = nla_get_u32(tb[NETDEV_A_QUEUE_ID]);
	if (*rxq_idx >= netdev->real_num_rx_queues) {
		NL_SET_ERR_MSG_ATTR(extack, tb[NETDEV_A_QUEUE_ID],
				    "RX queue index out of range");
		return -EINVAL;
	}
	return 0;
}

/* Walks the NETDEV_A_DMABUF_QUEUES entries of the request: with @binding
 * NULL it only checks them all and counts them in @nr_queues, otherwise it
 * binds each queue to @binding.
 */
static int netdev_nl_rx_queues(struct net_device *netdev,
			       struct genl_info *info,
			       struct net_devmem_dmabuf_binding *binding,
			       unsigned int *nr_queues)
{
	const struct nlattr *attr;
	u32 rxq_idx;
	int rem, err;

	*nr_queues = 0;
	nlmsg_for_each_attr(attr, info->nlhdr, GENL_HDRLEN, rem) {
		if (nla_type(attr) != NETDEV_A_DMABUF_QUEUES)
			continue;
		err = netdev_nl_parse_rx_queue(netdev, attr, &rxq_idx,
					       info->extack);
		if (!err && binding)
			err = net_devmem_bind_dmabuf_to_queue(netdev, rxq_idx,
							      binding,
							      info->extack);
		if (err)
			return err;
		(*nr_queues)++;
	}
	return 0;
}

/* The RX rings of all bound queues must fit in the dma-buf. */
static int netdev_nl_check_dmabuf_size(struct net_device *netdev,
				       struct net_devmem_dmabuf_binding *binding,
				       unsigned int nr_queues,
				       struct netlink_ext_ack *extack)
{
	struct kernel_ethtool_ringparam kernel_ring = {};
	struct ethtool_ringparam ring = {};

	netdev->ethtool_ops->get_ringparam(netdev, &ring, &kernel_ring, extack);
	if ((u64)ring.rx_pending * nr_queues > binding->num_pages) {
		NL_SET_ERR_MSG(extack, "The dma-buf is too small for the RX rings of the queues");
		return -E2BIG;
	}
	return 0;
}

/* Sends the reply of bind-rx or bind-tx, which carries the binding id. The
 * binding is unbound if the reply cannot be sent. Consumes @rsp. RTNL held.
 */
static int netdev_nl_bind_reply(struct sk_buff *rsp, void *hdr,
				struct net_devmem_dmabuf_binding *binding,
				struct genl_info *info)
{
	int err;

	if (nla_put_u32(rsp, NETDEV_A_DMABUF_ID, binding->id)) {
		nlmsg_free(rsp);
		net_devmem_unbind_dmabuf(binding);
		return -EMSGSIZE;
	}
	genlmsg_end(rsp, hdr);

	/* genlmsg_reply() consumes @rsp whatever it returns. */
	err = genlmsg_reply(rsp, info);
	if (err)
		net_devmem_unbind_dmabuf(binding);
	return err;
}

static int netdev_nl_bind_rx_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct net_devmem_dmabuf_binding *binding;
	struct net_device *netdev;
	unsigned int nr_queues;
	u32 ifindex, dmabuf_fd;
	struct sk_buff *rsp;
	void *hdr;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, NETDEV_A_DMABUF_IFINDEX) ||
	    GENL_REQ_ATTR_CHECK(info, NETDEV_A_DMABUF_FD) ||
	    GENL_REQ_ATTR_CHECK(info, NETDEV_A_DMABUF_QUEUES))
		return -EINVAL;

	ifindex = nla_get_u32(info->attrs[NETDEV_A_DMABUF_IFINDEX]);
	dmabuf_fd = nla_get_u32(info->attrs[NETDEV_A_DMABUF_FD]);

	rsp = genlmsg_new(GENLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!rsp)
		return -ENOMEM;
	hdr = genlmsg_put(rsp, info->snd_portid, info->snd_seq, &netdev_nl_family,
			  0, NETDEV_CMD_BIND_RX);
	if (!hdr) {
		err = -EMSGSIZE;
		goto err_free_rsp;
	}

	rtnl_lock();
	netdev = __dev_get_by_index(genl_info_net(info), ifindex);
	if (!netdev) {
		NL_SET_BAD_ATTR(info->extack, info->attrs[NETDEV_A_DMABUF_IFINDEX]);
		err = -ENODEV;
		goto err_unlock;
	}
	err = netdev_nl_rx_queues(netdev, info, NULL, &nr_queues);
	if (err)
		goto err_unlock;
	if (!netdev->queue_mgmt_ops) {
		NL_SET_ERR_MSG(info->extack, "The driver does not support device memory RX");
		err = -EOPNOTSUPP;
		goto err_unlock;
	}
	err = netdev_nl_check_data_split(netdev, info->extack);
	if (err)
		goto err_unlock;

	binding = net_devmem_bind_dmabuf(netdev, DMA_FROM_DEVICE, dmabuf_fd,
					 genl_info_net(info), info->snd_portid,
					 info->extack);
	if (IS_ERR(binding)) {
		err = PTR_ERR(binding);
		goto err_unlock;
	}

	err = netdev_nl_check_dmabuf_size(netdev, binding, nr_queues,
					  info->extack);
	if (err)
		goto err_unbind;
	err = netdev_nl_rx_queues(netdev, info, binding, &nr_queues);
	if (err)
		goto err_unbind;

	err = netdev_nl_bind_reply(rsp, hdr, binding, info);
	rtnl_unlock();
	return err;

err_unbind:
	net_devmem_unbind_dmabuf(binding);
err_unlock:
	rtnl_unlock();
err_free_rsp:
	nlmsg_free(rsp);
	return err;
}

/* ---- bind-tx ------------------------------------------------------------- */

/* Maps the dma-buf for transmit on the request's device. RTNL held. */
static struct net_devmem_dmabuf_binding *
netdev_nl_bind_tx_locked(struct genl_info *info)
{
	u32 ifindex = nla_get_u32(info->attrs[NETDEV_A_DMABUF_IFINDEX]);
	u32 dmabuf_fd = nla_get_u32(info->attrs[NETDEV_A_DMABUF_FD]);
	struct net_device *netdev;

	netdev = __dev_get_by_index(genl_info_net(info), ifindex);
	if (!netdev) {
		NL_SET_BAD_ATTR(info->extack, info->attrs[NETDEV_A_DMABUF_IFINDEX]);
		return ERR_PTR(-ENODEV);
	}
	if (!netdev->netmem_tx) {
		NL_SET_ERR_MSG(info->extack,
			       "The driver does not support device memory TX");
		return ERR_PTR(-EOPNOTSUPP);
	}
	return net_devmem_bind_dmabuf(netdev, DMA_TO_DEVICE, dmabuf_fd,
				      genl_info_net(info), info->snd_portid,
				      info->extack);
}

static int netdev_nl_bind_tx_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct net_devmem_dmabuf_binding *binding;
	struct sk_buff *rsp;
	void *hdr;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, NETDEV_A_DMABUF_IFINDEX) ||
	    GENL_REQ_ATTR_CHECK(info, NETDEV_A_DMABUF_FD))
		return -EINVAL;

	rsp = genlmsg_new(GENLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!rsp)
		return -ENOMEM;
	hdr = genlmsg_put(rsp, info->snd_portid, info->snd_seq, &netdev_nl_family,
			  0, NETDEV_CMD_BIND_TX);
	if (!hdr) {
		err = -EMSGSIZE;
		goto err_free_rsp;
	}

	rtnl_lock();
	binding = netdev_nl_bind_tx_locked(info);
	if (IS_ERR(binding)) {
		err = PTR_ERR(binding);
		goto err_unlock;
	}
	err = netdev_nl_bind_reply(rsp, hdr, binding, info);
	rtnl_unlock();
	return err;

err_unlock:
	rtnl_unlock();
err_free_rsp:
	nlmsg_free(rsp);
	return err;
}

/* ---- the family ---------------------------------------------------------- */

static const struct genl_ops netdev_nl_ops[] = {
	{
		.cmd		= NETDEV_CMD_DEV_GET,
		.doit		= netdev_nl_dev_get_doit,
		.dumpit		= netdev_nl_dev_get_dumpit,
		.policy		= netdev_dev_get_nl_policy,
		.maxattr	= NETDEV_A_DEV_IFINDEX,
	},
	{
		.cmd		= NETDEV_CMD_QUEUE_GET,
		.doit		= netdev_nl_queue_get_doit,
		.dumpit		= netdev_nl_queue_get_dumpit,
		.policy		= netdev_queue_get_nl_policy,
		.maxattr	= NETDEV_A_QUEUE_TYPE,
	},
	{
		.cmd		= NETDEV_CMD_BIND_RX,
		.doit		= netdev_nl_bind_rx_doit,
		.policy		= netdev_bind_rx_nl_policy,
		.maxattr	= NETDEV_A_DMABUF_FD,
		/* as mainline: CAP_NET_ADMIN in the initial user namespace */
		.flags		= GENL_ADMIN_PERM,
	},
	{
		/* unprivileged: it only lets the NIC read a dma-buf the
		 * caller already holds
		 */
		.cmd		= NETDEV_CMD_BIND_TX,
		.doit		= netdev_nl_bind_tx_doit,
		.policy		= netdev_bind_tx_nl_policy,
		.maxattr	= NETDEV_A_DMABUF_FD,
	},
};

static struct genl_family netdev_nl_family __ro_after_init = {
	.name		= NETDEV_FAMILY_NAME,
	.version	= NETDEV_FAMILY_VERSION,
	.netnsok	= true,
	.parallel_ops	= true,
	.module		= THIS_MODULE,
	.ops		= netdev_nl_ops,
	.n_ops		= ARRAY_SIZE(netdev_nl_ops),
	.resv_start_op	= NETDEV_CMD_DEV_GET,
};

/* Bindings belong to the netlink socket that made them. */
static int netdev_nl_release_event(struct notifier_block *nb,
				   unsigned long event, void *ptr)
{
	struct netlink_notify *notify = ptr;

	if (event != NETLINK_URELEASE || notify->protocol != NETLINK_GENERIC)
		return NOTIFY_DONE;
	net_devmem_unbind_owner(notify->net, notify->portid);
	return NOTIFY_OK;
}

static struct notifier_block netdev_nl_release_nb = {
	.notifier_call = netdev_nl_release_event,
};

static int __init netdev_nl_init(void)
{
	int err;

	err = genl_register_family(&netdev_nl_family);
	if (err)
		return err;
	err = netlink_register_notifier(&netdev_nl_release_nb);
	if (err)
		genl_unregister_family(&netdev_nl_family);
	return err;
}
subsys_initcall(netdev_nl_init);
