// SPDX-License-Identifier: GPL-2.0-only
/*
 * The "netdev" generic netlink family (Documentation/netlink/specs/netdev.yaml):
 * devices, their queues, NAPI instances and per-queue counters, page pools
 * (net/core/page_pool_user.c), and binding dma-bufs to RX queues or for
 * transmit (devmem TCP).
 *
 * Every get command describes its object with a table of attributes, each
 * with a function that reads its value from the object (or says it is
 * absent); one writer turns a table and an object into a message, for
 * replies, dumps and notifications alike. Dumps over devices walk them in
 * ifindex order and resume at the device and position where the previous
 * message filled up.
 *
 * Locking: devices, queues and NAPI instances are read under RTNL.
 */

#include <linux/ethtool.h>
#include <linux/ethtool_netlink.h>
#include <linux/netdevice.h>
#include <linux/notifier.h>
#include <linux/pid.h>
#include <linux/rtnetlink.h>
#include <linux/sched.h>
#include <net/genetlink.h>
#include <net/net_namespace.h>
#include <net/netdev_queues.h>
#include <net/netlink.h>
#include <net/sock.h>
#include <uapi/linux/netdev.h>

#include "devmem.h"
#include "netdev-genl.h"

static struct genl_family netdev_nl_family;

/* One entry of NETDEV_A_DMABUF_QUEUES. */
static const struct nla_policy netdev_queue_id_nl_policy[NETDEV_A_QUEUE_TYPE + 1] = {
	[NETDEV_A_QUEUE_ID] = { .type = NLA_U32, },
	[NETDEV_A_QUEUE_TYPE] = NLA_POLICY_MAX(NLA_U32, NETDEV_QUEUE_TYPE_TX),
};

/* ---- helpers shared with the other files of the family ------------------ */

/**
 * netdev_nl_put_uint() - put an attribute of the spec's "uint" type
 * @msg: the message
 * @attrtype: the attribute
 * @value: its value: 4 bytes when it fits, else 8
 *
 * Return: 0, or -EMSGSIZE.
 */
int netdev_nl_put_uint(struct sk_buff *msg, int attrtype, u64 value)
{
	if (value <= U32_MAX)
		return nla_put_u32(msg, attrtype, value);
	return nla_put(msg, attrtype, sizeof(value), &value);
}

/**
 * netdev_nl_check_uint() - policy check of a "uint" attribute
 * @attr: the attribute
 * @extack: where to say what is wrong
 *
 * Return: 0 when it holds 4 or 8 bytes, else -EINVAL.
 */
int netdev_nl_check_uint(const struct nlattr *attr,
			 struct netlink_ext_ack *extack)
{
	if (nla_len(attr) == sizeof(u32) || nla_len(attr) == sizeof(u64))
		return 0;
	NL_SET_ERR_MSG_ATTR(extack, attr,
			    "An unsigned integer of 4 or 8 bytes is expected");
	return -EINVAL;
}

/**
 * netdev_nl_check_id() - policy check of an object id ("uint", 1..U32_MAX)
 * @attr: the attribute
 * @extack: where to say what is wrong
 *
 * Return: 0 for an id in range, -EINVAL for a bad length, -ERANGE for 0 or
 * a value above U32_MAX, as the spec's min and max checks.
 */
int netdev_nl_check_id(const struct nlattr *attr,
		       struct netlink_ext_ack *extack)
{
	u64 id;
	int err;

	err = netdev_nl_check_uint(attr, extack);
	if (err)
		return err;
	id = netdev_nl_get_uint(attr);
	if (id >= 1 && id <= U32_MAX)
		return 0;
	NL_SET_ERR_MSG_ATTR(extack, attr, "An id from 1 to 4294967295 is expected");
	return -ERANGE;
}

/**
 * netdev_nl_get_uint() - read a "uint" attribute that passed its check
 * @attr: the attribute
 *
 * Return: its value.
 */
u64 netdev_nl_get_uint(const struct nlattr *attr)
{
	if (nla_len(attr) == sizeof(u32))
		return nla_get_u32(attr);
	return nla_get_u64(attr);
}

/**
 * netdev_nl_has_listeners() - is anyone in @net subscribed to @group?
 * @net: the network namespace
 * @group: the family's multicast group
 *
 * Return: true when a notification would reach someone.
 */
bool netdev_nl_has_listeners(struct net *net, enum netdev_nl_group group)
{
	return genl_has_listeners(&netdev_nl_family, net, group);
}

/**
 * netdev_nl_notify() - send a notification to a multicast group
 * @ntf: the message, consumed
 * @net: the namespace whose listeners get it
 * @group: the family's multicast group
 *
 * Context: any; allocations use GFP_ATOMIC.
 */
void netdev_nl_notify(struct sk_buff *ntf, struct net *net,
		      enum netdev_nl_group group)
{
	genlmsg_multicast_netns(&netdev_nl_family, net, ntf, 0, group,
				GFP_ATOMIC);
}

/* ---- the attribute writer ----------------------------------------------- */

static int netdev_nl_put_attrs(struct sk_buff *msg,
			       const struct netdev_nl_obj_desc *desc,
			       const void *obj)
{
	const struct netdev_nl_attr *attr;
	u64 val;
	int err;

	for (attr = desc->attrs; attr < desc->attrs + desc->n_attrs; attr++) {
		if (attr->put) {
			if (attr->put(msg, attr, obj))
				return -EMSGSIZE;
			continue;
		}
		if (!attr->get(obj, attr, &val))
			continue;
		if (attr->is_uint)
			err = netdev_nl_put_uint(msg, attr->type, val);
		else
			err = nla_put_u32(msg, attr->type, val);
		if (err)
			return -EMSGSIZE;
	}
	return 0;
}

/**
 * netdev_nl_write() - write one message about an object
 * @msg: the message buffer
 * @desc: how the object's attributes are written
 * @obj: the object
 * @portid: the destination's port id (0 for a notification)
 * @seq: the request's sequence number
 * @flags: 0 for a reply or notification, NLM_F_MULTI in a dump
 * @cmd: the message's command (@desc's, or a notification's)
 *
 * Return: 0, or -EMSGSIZE with @msg as it was.
 */
int netdev_nl_write(struct sk_buff *msg, const struct netdev_nl_obj_desc *desc,
		    const void *obj, u32 portid, u32 seq, int flags, u8 cmd)
{
	void *hdr;

	hdr = genlmsg_put(msg, portid, seq, &netdev_nl_family, flags, cmd);
	if (!hdr)
		return -EMSGSIZE;
	if (netdev_nl_put_attrs(msg, desc, obj)) {
		genlmsg_cancel(msg, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(msg, hdr);
	return 0;
}

/* A dump entry about @obj. */
static int netdev_nl_dump_write(struct sk_buff *skb,
				struct netlink_callback *cb,
				const struct netdev_nl_obj_desc *desc,
				const void *obj)
{
	return netdev_nl_write(skb, desc, obj, NETLINK_CB(cb->skb).portid,
			       cb->nlh->nlmsg_seq, NLM_F_MULTI, desc->cmd);
}

/* Finds the object of a do request and writes it, under RTNL. */
typedef int (*netdev_nl_do_fn)(struct sk_buff *rsp, struct genl_info *info);

static int netdev_nl_do(struct genl_info *info, netdev_nl_do_fn write_reply)
{
	struct sk_buff *rsp;
	int err;

	rsp = genlmsg_new(GENLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!rsp)
		return -ENOMEM;

	rtnl_lock();
	err = write_reply(rsp, info);
	rtnl_unlock();

	if (err) {
		nlmsg_free(rsp);
		return err;
	}
	return genlmsg_reply(rsp, info);
}

/* The device a request names by ifindex, with the attribute marked bad
 * when there is none. RTNL held.
 */
static struct net_device *netdev_nl_dev_of(struct genl_info *info, int attr)
{
	struct net_device *netdev;

	netdev = __dev_get_by_index(genl_info_net(info),
				    nla_get_u32(info->attrs[attr]));
	if (!netdev)
		NL_SET_BAD_ATTR(info->extack, info->attrs[attr]);
	return netdev;
}

/* Devices a dump takes in ifindex order per walk of the device list. */
#define NETDEV_NL_DUMP_BATCH	32

/* Fills @batch with up to NETDEV_NL_DUMP_BATCH devices of @net, those with
 * the lowest ifindexes not below @ifindex, in ifindex order, and returns
 * how many. 6.1 lists a namespace's devices in the order they were
 * registered, not by ifindex (a device can be created with any free
 * ifindex), while a dump resumes by ifindex: so dumps take the devices in
 * ifindex order, a batch per walk of the list, which keeps a dump of a
 * namespace of many devices that writes little linear in their number.
 * Needs RTNL.
 */
static unsigned int netdev_nl_devs_from(struct net *net, unsigned long ifindex,
					struct net_device **batch)
{
	struct net_device *netdev;
	unsigned int n = 0, i;

	for_each_netdev(net, netdev) {
		if (netdev->ifindex < ifindex)
			continue;
		if (n == NETDEV_NL_DUMP_BATCH &&
		    netdev->ifindex > batch[n - 1]->ifindex)
			continue;
		/* insert in order; a full batch drops its last */
		i = n < NETDEV_NL_DUMP_BATCH ? n++ : n - 1;
		for (; i && batch[i - 1]->ifindex > netdev->ifindex; i--)
			batch[i] = batch[i - 1];
		batch[i] = netdev;
	}
	return n;
}

/* Dumps what one device holds, from position *@pos on, advancing *@pos
 * past every entry written.
 */
typedef int (*netdev_nl_dump_dev_fn)(struct sk_buff *skb,
				     struct netlink_callback *cb,
				     struct net_device *netdev,
				     unsigned long *pos);

/* A dump over the devices of the caller's namespace (or only @ifindex's,
 * when not 0): cb->args[0] is the device to resume at, cb->args[1] the
 * position within it.
 */
static int netdev_nl_dump_devs(struct sk_buff *skb,
			       struct netlink_callback *cb, u32 ifindex,
			       netdev_nl_dump_dev_fn dump_dev)
{
	struct net_device *batch[NETDEV_NL_DUMP_BATCH];
	struct net *net = sock_net(skb->sk);
	struct net_device *netdev;
	unsigned int n, i;
	int err = 0;

	rtnl_lock();
	if (ifindex) {
		netdev = __dev_get_by_index(net, ifindex);
		err = netdev ? dump_dev(skb, cb, netdev, &cb->args[1]) :
			       -ENODEV;
		goto unlock;
	}
	for (;;) {
		n = netdev_nl_devs_from(net, cb->args[0], batch);
		for (i = 0; i < n && !err; i++) {
			netdev = batch[i];
			if (netdev->ifindex != cb->args[0]) {
				cb->args[0] = netdev->ifindex;
				cb->args[1] = 0;
			}
			err = dump_dev(skb, cb, netdev, &cb->args[1]);
		}
		if (err || n < NETDEV_NL_DUMP_BATCH)
			break;
		/* every device of the batch is done */
		cb->args[0] = batch[n - 1]->ifindex + 1UL;
		cb->args[1] = 0;
		cond_resched();
	}
unlock:
	rtnl_unlock();

	if (err == -EMSGSIZE && skb->len)
		return skb->len;
	return err;
}

/* ---- dev-get ------------------------------------------------------------ */

static bool netdev_nl_dev_ifindex(const void *obj,
				  const struct netdev_nl_attr *attr, u64 *val)
{
	const struct net_device *netdev = obj;

	*val = netdev->ifindex;
	return true;
}

static const struct netdev_nl_attr netdev_nl_dev_attrs[] = {
	{ NETDEV_A_DEV_IFINDEX, false, netdev_nl_dev_ifindex },
};

static const struct netdev_nl_obj_desc netdev_nl_dev_desc = {
	.cmd = NETDEV_CMD_DEV_GET,
	.attrs = netdev_nl_dev_attrs,
	.n_attrs = ARRAY_SIZE(netdev_nl_dev_attrs),
};

static int netdev_nl_dev_reply(struct sk_buff *rsp, struct genl_info *info)
{
	struct net_device *netdev;

	netdev = netdev_nl_dev_of(info, NETDEV_A_DEV_IFINDEX);
	if (!netdev)
		return -ENODEV;
	return netdev_nl_write(rsp, &netdev_nl_dev_desc, netdev,
			       info->snd_portid, info->snd_seq, 0,
			       NETDEV_CMD_DEV_GET);
}

static int netdev_nl_dev_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	if (GENL_REQ_ATTR_CHECK(info, NETDEV_A_DEV_IFINDEX))
		return -EINVAL;
	return netdev_nl_do(info, netdev_nl_dev_reply);
}

static int netdev_nl_dev_dump_one(struct sk_buff *skb,
				  struct netlink_callback *cb,
				  struct net_device *netdev, unsigned long *pos)
{
	int err;

	if (*pos)
		return 0;
	err = netdev_nl_dump_write(skb, cb, &netdev_nl_dev_desc, netdev);
	if (!err)
		(*pos)++;
	return err;
}

static int netdev_nl_dev_get_dumpit(struct sk_buff *skb,
				    struct netlink_callback *cb)
{
	return netdev_nl_dump_devs(skb, cb, 0, netdev_nl_dev_dump_one);
}

/* ---- queue-get ---------------------------------------------------------- */

/* One queue of a device. */
struct netdev_nl_queue {
	struct net_device *netdev;
	u32 id;
	u32 type;
};

static unsigned int netdev_nl_queue_count(const struct net_device *netdev,
					  u32 type)
{
	return type == NETDEV_QUEUE_TYPE_RX ? netdev->real_num_rx_queues :
					      netdev->real_num_tx_queues;
}

static struct napi_struct *netdev_nl_queue_napi(const struct netdev_nl_queue *q)
{
	if (q->type == NETDEV_QUEUE_TYPE_RX)
		return __netif_get_rx_queue(q->netdev, q->id)->napi;
	return netdev_get_tx_queue(q->netdev, q->id)->napi;
}

static bool netdev_nl_queue_id(const void *obj,
			       const struct netdev_nl_attr *attr, u64 *val)
{
	*val = ((const struct netdev_nl_queue *)obj)->id;
	return true;
}

static bool netdev_nl_queue_ifindex(const void *obj,
				    const struct netdev_nl_attr *attr, u64 *val)
{
	*val = ((const struct netdev_nl_queue *)obj)->netdev->ifindex;
	return true;
}

static bool netdev_nl_queue_type(const void *obj,
				 const struct netdev_nl_attr *attr, u64 *val)
{
	*val = ((const struct netdev_nl_queue *)obj)->type;
	return true;
}

static bool netdev_nl_queue_napi_id(const void *obj,
				    const struct netdev_nl_attr *attr, u64 *val)
{
	struct napi_struct *napi = netdev_nl_queue_napi(obj);

	*val = napi ? napi->napi_id : 0;
	return *val;
}

static bool netdev_nl_queue_dmabuf(const void *obj,
				   const struct netdev_nl_attr *attr, u64 *val)
{
	const struct netdev_nl_queue *q = obj;

	if (q->type != NETDEV_QUEUE_TYPE_RX)
		return false;
	*val = net_devmem_rxq_binding_id(__netif_get_rx_queue(q->netdev,
							      q->id));
	return *val;
}

static const struct netdev_nl_attr netdev_nl_queue_attrs[] = {
	{ NETDEV_A_QUEUE_ID, false, netdev_nl_queue_id },
	{ NETDEV_A_QUEUE_TYPE, false, netdev_nl_queue_type },
	{ NETDEV_A_QUEUE_IFINDEX, false, netdev_nl_queue_ifindex },
	{ NETDEV_A_QUEUE_NAPI_ID, false, netdev_nl_queue_napi_id },
	{ NETDEV_A_QUEUE_DMABUF, false, netdev_nl_queue_dmabuf },
};

static const struct netdev_nl_obj_desc netdev_nl_queue_desc = {
	.cmd = NETDEV_CMD_QUEUE_GET,
	.attrs = netdev_nl_queue_attrs,
	.n_attrs = ARRAY_SIZE(netdev_nl_queue_attrs),
};

static int netdev_nl_queue_reply(struct sk_buff *rsp, struct genl_info *info)
{
	struct netdev_nl_queue q = {
		.id = nla_get_u32(info->attrs[NETDEV_A_QUEUE_ID]),
		.type = nla_get_u32(info->attrs[NETDEV_A_QUEUE_TYPE]),
	};

	q.netdev = netdev_nl_dev_of(info, NETDEV_A_QUEUE_IFINDEX);
	if (!q.netdev)
		return -ENODEV;
	if (q.id >= netdev_nl_queue_count(q.netdev, q.type)) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[NETDEV_A_QUEUE_ID],
				    "No queue with this id");
		return -EINVAL;
	}
	return netdev_nl_write(rsp, &netdev_nl_queue_desc, &q,
			       info->snd_portid, info->snd_seq, 0,
			       NETDEV_CMD_QUEUE_GET);
}

static int netdev_nl_queue_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	if (GENL_REQ_ATTR_CHECK(info, NETDEV_A_QUEUE_ID) ||
	    GENL_REQ_ATTR_CHECK(info, NETDEV_A_QUEUE_TYPE) ||
	    GENL_REQ_ATTR_CHECK(info, NETDEV_A_QUEUE_IFINDEX))
		return -EINVAL;
	return netdev_nl_do(info, netdev_nl_queue_reply);
}

/* Position @pos within a device: its RX queues, then its TX queues. */
static int netdev_nl_queue_dump_one(struct sk_buff *skb,
				    struct netlink_callback *cb,
				    struct net_device *netdev,
				    unsigned long *pos)
{
	unsigned int nr_rx = netdev->real_num_rx_queues;
	struct netdev_nl_queue q = { .netdev = netdev };
	int err;

	for (; *pos < nr_rx + netdev->real_num_tx_queues; (*pos)++) {
		q.type = *pos < nr_rx ? NETDEV_QUEUE_TYPE_RX :
					NETDEV_QUEUE_TYPE_TX;
		q.id = *pos < nr_rx ? *pos : *pos - nr_rx;
		err = netdev_nl_dump_write(skb, cb, &netdev_nl_queue_desc, &q);
		if (err)
			return err;
	}
	return 0;
}

static int netdev_nl_queue_get_dumpit(struct sk_buff *skb,
				      struct netlink_callback *cb)
{
	const struct genl_dumpit_info *dump = genl_dumpit_info(cb);
	const struct nlattr *ifindex = dump->attrs[NETDEV_A_QUEUE_IFINDEX];

	return netdev_nl_dump_devs(skb, cb, ifindex ? nla_get_u32(ifindex) : 0,
				   netdev_nl_queue_dump_one);
}

/* ---- napi-get ----------------------------------------------------------- */

static bool netdev_nl_napi_ifindex(const void *obj,
				   const struct netdev_nl_attr *attr, u64 *val)
{
	*val = ((const struct napi_struct *)obj)->dev->ifindex;
	return true;
}

static bool netdev_nl_napi_id(const void *obj,
			      const struct netdev_nl_attr *attr, u64 *val)
{
	*val = ((const struct napi_struct *)obj)->napi_id;
	return true;
}

static bool netdev_nl_napi_irq(const void *obj,
			       const struct netdev_nl_attr *attr, u64 *val)
{
	const struct napi_struct *napi = obj;

	*val = napi->irq;
	return napi->irq >= 0;
}

static bool netdev_nl_napi_pid(const void *obj,
			       const struct netdev_nl_attr *attr, u64 *val)
{
	const struct napi_struct *napi = obj;
	/* a driver may stop the thread without RTNL (napi_disable) */
	struct task_struct *thread = READ_ONCE(napi->thread);

	if (!thread)
		return false;
	*val = task_pid_nr(thread);
	return true;
}

static const struct netdev_nl_attr netdev_nl_napi_attrs[] = {
	{ NETDEV_A_NAPI_ID, false, netdev_nl_napi_id },
	{ NETDEV_A_NAPI_IFINDEX, false, netdev_nl_napi_ifindex },
	{ NETDEV_A_NAPI_IRQ, false, netdev_nl_napi_irq },
	{ NETDEV_A_NAPI_PID, false, netdev_nl_napi_pid },
};

static const struct netdev_nl_obj_desc netdev_nl_napi_desc = {
	.cmd = NETDEV_CMD_NAPI_GET,
	.attrs = netdev_nl_napi_attrs,
	.n_attrs = ARRAY_SIZE(netdev_nl_napi_attrs),
};

/* Only NAPI instances with an id (those that receive) can be named. */
static bool netdev_nl_napi_listed(const struct napi_struct *napi)
{
	return napi->napi_id;
}

static int netdev_nl_napi_reply(struct sk_buff *rsp, struct genl_info *info)
{
	u32 id = nla_get_u32(info->attrs[NETDEV_A_NAPI_ID]);
	struct net_device *netdev;
	struct napi_struct *napi;
	int err = -ENOENT;

	/* drivers add and delete NAPI instances under RCU, not always
	 * under RTNL
	 */
	rcu_read_lock();
	for_each_netdev(genl_info_net(info), netdev) {
		list_for_each_entry_rcu(napi, &netdev->napi_list, dev_list) {
			if (!netdev_nl_napi_listed(napi) || napi->napi_id != id)
				continue;
			err = netdev_nl_write(rsp, &netdev_nl_napi_desc, napi,
					      info->snd_portid, info->snd_seq,
					      0, NETDEV_CMD_NAPI_GET);
			goto out;
		}
	}
	NL_SET_BAD_ATTR(info->extack, info->attrs[NETDEV_A_NAPI_ID]);
out:
	rcu_read_unlock();
	return err;
}

static int netdev_nl_napi_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	if (GENL_REQ_ATTR_CHECK(info, NETDEV_A_NAPI_ID))
		return -EINVAL;
	return netdev_nl_do(info, netdev_nl_napi_reply);
}

/* A device's listed NAPI instances. Its list holds the newest first, and
 * ids grow, so ids fall along it: *@pos is the id last written, and the
 * next message goes on below it (instances added meanwhile are skipped).
 */
static int netdev_nl_napi_dump_one(struct sk_buff *skb,
				   struct netlink_callback *cb,
				   struct net_device *netdev,
				   unsigned long *pos)
{
	struct napi_struct *napi;
	int err = 0;

	rcu_read_lock();
	list_for_each_entry_rcu(napi, &netdev->napi_list, dev_list) {
		if (!netdev_nl_napi_listed(napi) ||
		    (*pos && napi->napi_id >= *pos))
			continue;
		err = netdev_nl_dump_write(skb, cb, &netdev_nl_napi_desc, napi);
		if (err)
			break;
		*pos = napi->napi_id;
	}
	rcu_read_unlock();
	return err;
}

static int netdev_nl_napi_get_dumpit(struct sk_buff *skb,
				     struct netlink_callback *cb)
{
	const struct genl_dumpit_info *dump = genl_dumpit_info(cb);
	const struct nlattr *ifindex = dump->attrs[NETDEV_A_NAPI_IFINDEX];

	return netdev_nl_dump_devs(skb, cb, ifindex ? nla_get_u32(ifindex) : 0,
				   netdev_nl_napi_dump_one);
}

/* ---- qstats-get ---------------------------------------------------------- */

/* The counters of a device (@type < 0) or of one of its queues. */
struct netdev_nl_qstats {
	struct net_device *netdev;
	int type;
	u32 id;
	struct netdev_queue_stats_rx rx;
	struct netdev_queue_stats_tx tx;
};

static bool netdev_nl_qstats_ifindex(const void *obj,
				     const struct netdev_nl_attr *attr,
				     u64 *val)
{
	*val = ((const struct netdev_nl_qstats *)obj)->netdev->ifindex;
	return true;
}

static bool netdev_nl_qstats_queue_type(const void *obj,
					const struct netdev_nl_attr *attr,
					u64 *val)
{
	const struct netdev_nl_qstats *qs = obj;

	*val = qs->type;
	return qs->type >= 0;
}

static bool netdev_nl_qstats_queue_id(const void *obj,
				      const struct netdev_nl_attr *attr,
				      u64 *val)
{
	const struct netdev_nl_qstats *qs = obj;

	*val = qs->id;
	return qs->type >= 0;
}

/* A counter at attr->offset; absent when the driver does not keep it
 * (U64_MAX).
 */
static bool netdev_nl_qstats_counter(const void *obj,
				     const struct netdev_nl_attr *attr,
				     u64 *val)
{
	*val = *(const u64 *)(obj + attr->offset);
	return *val != U64_MAX;
}

#define NETDEV_NL_QSTAT(name, member) {					\
	.type = NETDEV_A_QSTATS_##name,					\
	.is_uint = true,						\
	.get = netdev_nl_qstats_counter,				\
	.offset = offsetof(struct netdev_nl_qstats, member),		\
}

static const struct netdev_nl_attr netdev_nl_qstats_attrs[] = {
	{ NETDEV_A_QSTATS_IFINDEX, false, netdev_nl_qstats_ifindex },
	{ NETDEV_A_QSTATS_QUEUE_TYPE, false, netdev_nl_qstats_queue_type },
	{ NETDEV_A_QSTATS_QUEUE_ID, false, netdev_nl_qstats_queue_id },
	NETDEV_NL_QSTAT(RX_PACKETS, rx.packets),
	NETDEV_NL_QSTAT(RX_BYTES, rx.bytes),
	NETDEV_NL_QSTAT(TX_PACKETS, tx.packets),
	NETDEV_NL_QSTAT(TX_BYTES, tx.bytes),
	NETDEV_NL_QSTAT(RX_ALLOC_FAIL, rx.alloc_fail),
	NETDEV_NL_QSTAT(RX_HW_DROPS, rx.hw_drops),
	NETDEV_NL_QSTAT(RX_CSUM_BAD, rx.csum_bad),
	NETDEV_NL_QSTAT(TX_WAKE, tx.wake),
};

static const struct netdev_nl_obj_desc netdev_nl_qstats_desc = {
	.cmd = NETDEV_CMD_QSTATS_GET,
	.attrs = netdev_nl_qstats_attrs,
	.n_attrs = ARRAY_SIZE(netdev_nl_qstats_attrs),
};

static void netdev_nl_qstats_unset(struct netdev_nl_qstats *qs)
{
	memset(&qs->rx, 0xff, sizeof(qs->rx));
	memset(&qs->tx, 0xff, sizeof(qs->tx));
}

/* Does the driver keep none of the counters in @stats (@size bytes)? */
static bool netdev_nl_qstats_none(const void *stats, size_t size)
{
	return !memchr_inv(stats, 0xff, size);
}

/* Adds the counters @from has to @to; a counter @to lacks stays absent. */
static void netdev_nl_qstats_add(u64 *to, const u64 *from, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (to[i] != U64_MAX && from[i] != U64_MAX)
			to[i] += from[i];
}

/* The device's totals: its base plus every current queue. */
static void netdev_nl_qstats_device(struct netdev_nl_qstats *qs)
{
	const struct netdev_stat_ops *ops = qs->netdev->stat_ops;
	struct netdev_queue_stats_rx rx;
	struct netdev_queue_stats_tx tx;
	unsigned int i;

	netdev_nl_qstats_unset(qs);
	ops->get_base_stats(qs->netdev, &qs->rx, &qs->tx);
	for (i = 0; i < qs->netdev->real_num_rx_queues; i++) {
		memset(&rx, 0xff, sizeof(rx));
		ops->get_queue_stats_rx(qs->netdev, i, &rx);
		netdev_nl_qstats_add((u64 *)&qs->rx, (u64 *)&rx,
				     sizeof(rx) / sizeof(u64));
	}
	for (i = 0; i < qs->netdev->real_num_tx_queues; i++) {
		memset(&tx, 0xff, sizeof(tx));
		ops->get_queue_stats_tx(qs->netdev, i, &tx);
		netdev_nl_qstats_add((u64 *)&qs->tx, (u64 *)&tx,
				     sizeof(tx) / sizeof(u64));
	}
}

/* Position @pos within a device: its totals (@per_queue false), or its RX
 * queues then its TX queues.
 */
static int netdev_nl_qstats_dump_dev(struct sk_buff *skb,
				     struct netlink_callback *cb,
				     struct net_device *netdev,
				     unsigned long *pos, bool per_queue)
{
	const struct netdev_stat_ops *ops = netdev->stat_ops;
	unsigned int nr_rx = netdev->real_num_rx_queues;
	struct netdev_nl_qstats qs = { .netdev = netdev, .type = -1 };
	int err;

	if (!ops)
		return 0;
	if (!per_queue) {
		if (*pos)
			return 0;
		netdev_nl_qstats_device(&qs);
		err = netdev_nl_dump_write(skb, cb, &netdev_nl_qstats_desc,
					   &qs);
		if (!err)
			(*pos)++;
		return err;
	}
	for (; *pos < nr_rx + netdev->real_num_tx_queues; (*pos)++) {
		netdev_nl_qstats_unset(&qs);
		if (*pos < nr_rx) {
			qs.type = NETDEV_QUEUE_TYPE_RX;
			qs.id = *pos;
			ops->get_queue_stats_rx(netdev, qs.id, &qs.rx);
		} else {
			qs.type = NETDEV_QUEUE_TYPE_TX;
			qs.id = *pos - nr_rx;
			ops->get_queue_stats_tx(netdev, qs.id, &qs.tx);
		}
		/* a queue the driver keeps nothing for (igb before its first
		 * open lists more queues than it has rings) is left out
		 */
		if (netdev_nl_qstats_none(&qs.rx, sizeof(qs.rx)) &&
		    netdev_nl_qstats_none(&qs.tx, sizeof(qs.tx)))
			continue;
		err = netdev_nl_dump_write(skb, cb, &netdev_nl_qstats_desc,
					   &qs);
		if (err)
			return err;
	}
	return 0;
}

static int netdev_nl_qstats_dump_totals(struct sk_buff *skb,
					struct netlink_callback *cb,
					struct net_device *netdev,
					unsigned long *pos)
{
	return netdev_nl_qstats_dump_dev(skb, cb, netdev, pos, false);
}

static int netdev_nl_qstats_dump_queues(struct sk_buff *skb,
					struct netlink_callback *cb,
					struct net_device *netdev,
					unsigned long *pos)
{
	return netdev_nl_qstats_dump_dev(skb, cb, netdev, pos, true);
}

static int netdev_nl_qstats_get_dumpit(struct sk_buff *skb,
				       struct netlink_callback *cb)
{
	const struct genl_dumpit_info *dump = genl_dumpit_info(cb);
	const struct nlattr *ifindex_attr = dump->attrs[NETDEV_A_QSTATS_IFINDEX];
	const struct nlattr *scope = dump->attrs[NETDEV_A_QSTATS_SCOPE];
	u32 ifindex = ifindex_attr ? nla_get_u32(ifindex_attr) : 0;
	u64 scopes = scope ? netdev_nl_get_uint(scope) : 0;
	struct net_device *netdev;

	if (scopes & ~(u64)NETDEV_QSTATS_SCOPE_QUEUE) {
		NL_SET_ERR_MSG_ATTR(cb->extack, scope, "Unknown scope");
		return -EINVAL;
	}
	if (ifindex) {
		/* a device without per-queue counters is refused by name */
		rtnl_lock();
		netdev = __dev_get_by_index(sock_net(skb->sk), ifindex);
		if (netdev && !netdev->stat_ops) {
			rtnl_unlock();
			NL_SET_ERR_MSG_ATTR(cb->extack, ifindex_attr,
					    "The device keeps no per-queue counters");
			return -EOPNOTSUPP;
		}
		rtnl_unlock();
	}
	return netdev_nl_dump_devs(skb, cb, ifindex,
				   scopes ? netdev_nl_qstats_dump_queues :
					    netdev_nl_qstats_dump_totals);
}

/* ---- bind-rx ------------------------------------------------------------- */

/* What a bind-rx request asks for, once its attributes are checked. */
struct netdev_nl_bind_rx {
	struct net_device *netdev;
	u32 dmabuf_fd;
	unsigned long *rxqs;		/* bitmap of the RX queues to bind */
	unsigned int nr_rxqs;
};

/* Reads one NETDEV_A_DMABUF_QUEUES entry and marks its queue in the
 * request, refusing anything but an RX queue of the device listed once.
 */
static int netdev_nl_bind_rx_add_queue(struct netdev_nl_bind_rx *req,
				       const struct nlattr *nest,
				       struct netlink_ext_ack *extack)
{
	struct nlattr *tb[NETDEV_A_QUEUE_TYPE + 1];
	u32 idx;
	int err;

	err = nla_parse_nested(tb, NETDEV_A_QUEUE_TYPE, nest,
			       netdev_queue_id_nl_policy, extack);
	if (err)
		return err;
	if (NL_REQ_ATTR_CHECK(extack, nest, tb, NETDEV_A_QUEUE_ID) ||
	    NL_REQ_ATTR_CHECK(extack, nest, tb, NETDEV_A_QUEUE_TYPE))
		return -EINVAL;
	if (nla_get_u32(tb[NETDEV_A_QUEUE_TYPE]) != NETDEV_QUEUE_TYPE_RX) {
		NL_SET_ERR_MSG_ATTR(extack, tb[NETDEV_A_QUEUE_TYPE],
				    "Only RX queues can be bound to a dma-buf");
		return -EINVAL;
	}
	idx = nla_get_u32(tb[NETDEV_A_QUEUE_ID]);
	if (idx >= req->netdev->real_num_rx_queues) {
		NL_SET_ERR_MSG_ATTR(extack, tb[NETDEV_A_QUEUE_ID],
				    "RX queue index out of range");
		return -EINVAL;
	}
	if (__test_and_set_bit(idx, req->rxqs)) {
		NL_SET_ERR_MSG_ATTR(extack, tb[NETDEV_A_QUEUE_ID],
				    "An RX queue is listed twice");
		return -EINVAL;
	}
	req->nr_rxqs++;
	return 0;
}

/* Reads the request's device and queues into @req. RTNL held. */
static int netdev_nl_bind_rx_parse(struct genl_info *info,
				   struct netdev_nl_bind_rx *req)
{
	const struct nlattr *attr;
	int rem, err;

	req->netdev = netdev_nl_dev_of(info, NETDEV_A_DMABUF_IFINDEX);
	if (!req->netdev)
		return -ENODEV;
	req->dmabuf_fd = nla_get_u32(info->attrs[NETDEV_A_DMABUF_FD]);
	req->rxqs = bitmap_zalloc(req->netdev->real_num_rx_queues, GFP_KERNEL);
	if (!req->rxqs)
		return -ENOMEM;

	nlmsg_for_each_attr(attr, info->nlhdr, GENL_HDRLEN, rem) {
		if (nla_type(attr) != NETDEV_A_DMABUF_QUEUES)
			continue;
		err = netdev_nl_bind_rx_add_queue(req, attr, info->extack);
		if (err)
			return err;
	}
	return 0;
}

/* The device's rings as ethtool reports them. */
static void netdev_nl_get_rings(struct net_device *netdev,
				struct ethtool_ringparam *ring,
				struct kernel_ethtool_ringparam *kernel_ring,
				struct netlink_ext_ack *extack)
{
	memset(ring, 0, sizeof(*ring));
	memset(kernel_ring, 0, sizeof(*kernel_ring));
	netdev->ethtool_ops->get_ringparam(netdev, ring, kernel_ring, extack);
}

/* The device must be able to keep headers out of the dma-buf: header
 * split on (the stack cannot read headers in device memory), and every
 * frame split at its payload (hds-thresh 0; a frame left whole in host
 * memory would reach a devmem reader as readable bytes).
 */
static int netdev_nl_bind_rx_check_dev(struct net_device *netdev,
				       struct netlink_ext_ack *extack)
{
	struct kernel_ethtool_ringparam kernel_ring;
	struct ethtool_ringparam ring;

	if (!netdev->queue_mgmt_ops) {
		NL_SET_ERR_MSG(extack, "The driver does not support device memory RX");
		return -EOPNOTSUPP;
	}
	if (!netdev->ethtool_ops || !netdev->ethtool_ops->get_ringparam) {
		NL_SET_ERR_MSG(extack, "The device cannot report tcp-data-split");
		return -EINVAL;
	}
	netdev_nl_get_rings(netdev, &ring, &kernel_ring, extack);
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

/* Every bound queue fills its whole ring from the dma-buf. */
static int netdev_nl_bind_rx_check_size(const struct netdev_nl_bind_rx *req,
					struct net_devmem_dmabuf_binding *binding,
					struct netlink_ext_ack *extack)
{
	struct kernel_ethtool_ringparam kernel_ring;
	struct ethtool_ringparam ring;

	netdev_nl_get_rings(req->netdev, &ring, &kernel_ring, extack);
	if ((u64)ring.rx_pending * req->nr_rxqs > binding->num_pages) {
		NL_SET_ERR_MSG(extack, "The dma-buf is too small for the RX rings of the queues");
		return -E2BIG;
	}
	return 0;
}

/* Answers a bind with the binding's id. Consumes @rsp; the binding is
 * unbound when the answer cannot be sent. RTNL held.
 */
static int netdev_nl_bind_answer(struct sk_buff *rsp, u8 cmd,
				 struct net_devmem_dmabuf_binding *binding,
				 struct genl_info *info)
{
	void *hdr;
	int err;

	hdr = genlmsg_put(rsp, info->snd_portid, info->snd_seq,
			  &netdev_nl_family, 0, cmd);
	if (!hdr || nla_put_u32(rsp, NETDEV_A_DMABUF_ID, binding->id)) {
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

/* Makes the binding, owned by the netlink socket @owner, and binds the
 * request's queues to it. RTNL held.
 */
static struct net_devmem_dmabuf_binding *
netdev_nl_bind_rx_locked(struct genl_info *info, struct netdev_nl_bind_rx *req,
			 struct sock *owner)
{
	struct net_devmem_dmabuf_binding *binding;
	unsigned int idx;
	int err;

	err = netdev_nl_bind_rx_parse(info, req);
	if (err)
		return ERR_PTR(err);
	err = netdev_nl_bind_rx_check_dev(req->netdev, info->extack);
	if (err)
		return ERR_PTR(err);

	binding = net_devmem_bind_dmabuf(req->netdev, DMA_FROM_DEVICE,
					 req->dmabuf_fd, owner, info->snd_portid,
					 info->extack);
	if (IS_ERR(binding))
		return binding;

	err = netdev_nl_bind_rx_check_size(req, binding, info->extack);
	for_each_set_bit(idx, req->rxqs, req->netdev->real_num_rx_queues) {
		if (err)
			break;
		err = net_devmem_bind_dmabuf_to_queue(req->netdev, idx,
						      binding, info->extack);
	}
	if (err) {
		net_devmem_unbind_dmabuf(binding);
		return ERR_PTR(err);
	}
	return binding;
}

static int netdev_nl_bind_rx_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct net_devmem_dmabuf_binding *binding;
	struct netdev_nl_bind_rx req = {};
	struct sk_buff *rsp;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, NETDEV_A_DMABUF_IFINDEX) ||
	    GENL_REQ_ATTR_CHECK(info, NETDEV_A_DMABUF_FD) ||
	    GENL_REQ_ATTR_CHECK(info, NETDEV_A_DMABUF_QUEUES))
		return -EINVAL;

	rsp = genlmsg_new(GENLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!rsp)
		return -ENOMEM;

	rtnl_lock();
	binding = netdev_nl_bind_rx_locked(info, &req, NETLINK_CB(skb).sk);
	if (IS_ERR(binding)) {
		nlmsg_free(rsp);
		err = PTR_ERR(binding);
	} else {
		err = netdev_nl_bind_answer(rsp, NETDEV_CMD_BIND_RX, binding,
					    info);
	}
	rtnl_unlock();

	bitmap_free(req.rxqs);
	return err;
}

/* ---- bind-tx ------------------------------------------------------------- */

/* Maps the dma-buf for transmit on the request's device, for the netlink
 * socket @owner. RTNL held.
 */
static struct net_devmem_dmabuf_binding *
netdev_nl_bind_tx_locked(struct genl_info *info, struct sock *owner)
{
	struct net_device *netdev;

	netdev = netdev_nl_dev_of(info, NETDEV_A_DMABUF_IFINDEX);
	if (!netdev)
		return ERR_PTR(-ENODEV);
	if (!netdev->netmem_tx) {
		NL_SET_ERR_MSG(info->extack,
			       "The driver does not support device memory TX");
		return ERR_PTR(-EOPNOTSUPP);
	}
	return net_devmem_bind_dmabuf(netdev, DMA_TO_DEVICE,
				      nla_get_u32(info->attrs[NETDEV_A_DMABUF_FD]),
				      owner, info->snd_portid, info->extack);
}

static int netdev_nl_bind_tx_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct net_devmem_dmabuf_binding *binding;
	struct sk_buff *rsp;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, NETDEV_A_DMABUF_IFINDEX) ||
	    GENL_REQ_ATTR_CHECK(info, NETDEV_A_DMABUF_FD))
		return -EINVAL;

	rsp = genlmsg_new(GENLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!rsp)
		return -ENOMEM;

	rtnl_lock();
	binding = netdev_nl_bind_tx_locked(info, NETLINK_CB(skb).sk);
	if (IS_ERR(binding)) {
		nlmsg_free(rsp);
		err = PTR_ERR(binding);
	} else {
		err = netdev_nl_bind_answer(rsp, NETDEV_CMD_BIND_TX, binding,
					    info);
	}
	rtnl_unlock();
	return err;
}

/* ---- the family ---------------------------------------------------------- */

static const struct nla_policy netdev_dev_get_nl_policy[NETDEV_A_DEV_IFINDEX + 1] = {
	[NETDEV_A_DEV_IFINDEX] = NLA_POLICY_MIN(NLA_U32, 1),
};

static const struct nla_policy
netdev_page_pool_get_nl_policy[NETDEV_A_PAGE_POOL_ID + 1] = {
	[NETDEV_A_PAGE_POOL_ID] =
		NLA_POLICY_VALIDATE_FN(NLA_BINARY, netdev_nl_check_id),
};

/* The pool named in page-pool-stats-get's info nest. */
const struct nla_policy
netdev_page_pool_info_nl_policy[NETDEV_A_PAGE_POOL_IFINDEX + 1] = {
	[NETDEV_A_PAGE_POOL_ID] =
		NLA_POLICY_VALIDATE_FN(NLA_BINARY, netdev_nl_check_id),
	[NETDEV_A_PAGE_POOL_IFINDEX] = NLA_POLICY_MIN(NLA_U32, 1),
};

static const struct nla_policy
netdev_page_pool_stats_get_nl_policy[NETDEV_A_PAGE_POOL_STATS_INFO + 1] = {
	[NETDEV_A_PAGE_POOL_STATS_INFO] =
		NLA_POLICY_NESTED(netdev_page_pool_info_nl_policy),
};

static const struct nla_policy netdev_queue_get_nl_policy[NETDEV_A_QUEUE_TYPE + 1] = {
	[NETDEV_A_QUEUE_ID] = { .type = NLA_U32, },
	[NETDEV_A_QUEUE_IFINDEX] = NLA_POLICY_MIN(NLA_U32, 1),
	[NETDEV_A_QUEUE_TYPE] = NLA_POLICY_MAX(NLA_U32, NETDEV_QUEUE_TYPE_TX),
};

static const struct nla_policy netdev_napi_get_nl_policy[NETDEV_A_NAPI_ID + 1] = {
	[NETDEV_A_NAPI_IFINDEX] = NLA_POLICY_MIN(NLA_U32, 1),
	[NETDEV_A_NAPI_ID] = NLA_POLICY_MIN(NLA_U32, 1),
};

static const struct nla_policy netdev_qstats_get_nl_policy[NETDEV_A_QSTATS_SCOPE + 1] = {
	[NETDEV_A_QSTATS_IFINDEX] = NLA_POLICY_MIN(NLA_U32, 1),
	[NETDEV_A_QSTATS_SCOPE] =
		NLA_POLICY_VALIDATE_FN(NLA_BINARY, netdev_nl_check_uint),
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

static const struct genl_ops netdev_nl_ops[] = {
	{
		.cmd		= NETDEV_CMD_DEV_GET,
		.doit		= netdev_nl_dev_get_doit,
		.dumpit		= netdev_nl_dev_get_dumpit,
		.policy		= netdev_dev_get_nl_policy,
		.maxattr	= NETDEV_A_DEV_IFINDEX,
	},
	{
		.cmd		= NETDEV_CMD_PAGE_POOL_GET,
		.doit		= netdev_nl_page_pool_get_doit,
		.dumpit		= netdev_nl_page_pool_get_dumpit,
		.policy		= netdev_page_pool_get_nl_policy,
		.maxattr	= NETDEV_A_PAGE_POOL_ID,
	},
	{
		.cmd		= NETDEV_CMD_PAGE_POOL_STATS_GET,
		.doit		= netdev_nl_page_pool_stats_get_doit,
		.dumpit		= netdev_nl_page_pool_stats_get_dumpit,
		.policy		= netdev_page_pool_stats_get_nl_policy,
		.maxattr	= NETDEV_A_PAGE_POOL_STATS_INFO,
	},
	{
		.cmd		= NETDEV_CMD_QUEUE_GET,
		.doit		= netdev_nl_queue_get_doit,
		.dumpit		= netdev_nl_queue_get_dumpit,
		.policy		= netdev_queue_get_nl_policy,
		.maxattr	= NETDEV_A_QUEUE_TYPE,
	},
	{
		.cmd		= NETDEV_CMD_NAPI_GET,
		.doit		= netdev_nl_napi_get_doit,
		.dumpit		= netdev_nl_napi_get_dumpit,
		.policy		= netdev_napi_get_nl_policy,
		.maxattr	= NETDEV_A_NAPI_ID,
	},
	{
		.cmd		= NETDEV_CMD_QSTATS_GET,
		.dumpit		= netdev_nl_qstats_get_dumpit,
		.policy		= netdev_qstats_get_nl_policy,
		.maxattr	= NETDEV_A_QSTATS_SCOPE,
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

static const struct genl_multicast_group netdev_nl_mcgrps[] = {
	[NETDEV_NLGRP_MGMT] = { .name = NETDEV_MCGRP_MGMT, },
	[NETDEV_NLGRP_PAGE_POOL] = { .name = NETDEV_MCGRP_PAGE_POOL, },
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
	.mcgrps		= netdev_nl_mcgrps,
	.n_mcgrps	= ARRAY_SIZE(netdev_nl_mcgrps),
};

/* dev-add-ntf and dev-del-ntf: a device appears in or leaves a namespace
 * (a move between namespaces is both).
 */
static void netdev_nl_dev_notify(struct net_device *netdev, u8 cmd)
{
	struct net *net = dev_net(netdev);
	struct sk_buff *ntf;

	if (!netdev_nl_has_listeners(net, NETDEV_NLGRP_MGMT))
		return;
	ntf = genlmsg_new(GENLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!ntf)
		return;
	if (netdev_nl_write(ntf, &netdev_nl_dev_desc, netdev, 0, 0, 0, cmd)) {
		nlmsg_free(ntf);
		return;
	}
	netdev_nl_notify(ntf, net, NETDEV_NLGRP_MGMT);
}

static int netdev_nl_netdevice_event(struct notifier_block *nb,
				     unsigned long event, void *ptr)
{
	struct net_device *netdev = netdev_notifier_info_to_dev(ptr);

	switch (event) {
	case NETDEV_REGISTER:
		netdev_nl_dev_notify(netdev, NETDEV_CMD_DEV_ADD_NTF);
		break;
	case NETDEV_UNREGISTER:
		/* not again for the rebroadcasts of a device that lingers */
		if (netdev->reg_state != NETREG_UNREGISTERED)
			netdev_nl_dev_notify(netdev, NETDEV_CMD_DEV_DEL_NTF);
		break;
	}
	return NOTIFY_OK;
}

static struct notifier_block netdev_nl_netdevice_nb = {
	.notifier_call = netdev_nl_netdevice_event,
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
		goto err_family;
	err = register_netdevice_notifier(&netdev_nl_netdevice_nb);
	if (err)
		goto err_release_nb;
	return 0;

err_release_nb:
	netlink_unregister_notifier(&netdev_nl_release_nb);
err_family:
	genl_unregister_family(&netdev_nl_family);
	return err;
}
subsys_initcall(netdev_nl_init);
