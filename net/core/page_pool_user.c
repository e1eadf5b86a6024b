// SPDX-License-Identifier: GPL-2.0-only
/*
 * Page pools seen from user space, through the netdev netlink family:
 * page-pool-get and page-pool-stats-get (do and dump), and the
 * page-pool-add/change/del notifications of the "page-pool" group.
 *
 * A pool gets an id when it is created and stays listed until it is freed,
 * which may be long after its driver destroyed ("detached") it: a pool
 * lives until every buffer it handed out came back. Only pools a driver
 * created for a device (page_pool_params.netdev) are shown, in that
 * device's network namespace; once the device is gone they are shown under
 * the namespace's loopback device, without an ifindex.
 *
 * Locking: page_pools, and the user fields of every pool in it, are under
 * the xarray's lock, taken with bottom halves disabled: a pool can be
 * destroyed and freed from an RCU callback (XDP's memory model letting go
 * of it). A pool found under the lock is not freed before the lock is
 * dropped, so replies and notifications are written under it, without
 * sleeping.
 */

#include <linux/netdevice.h>
#include <linux/sched.h>
#include <linux/stddef.h>
#include <linux/timekeeping.h>
#include <linux/xarray.h>
#include <net/genetlink.h>
#include <net/net_namespace.h>
#include <net/page_pool.h>
#include <net/sock.h>
#include <uapi/linux/netdev.h>

#include "devmem.h"
#include "netdev-genl.h"
#include "page_pool_priv.h"

static DEFINE_XARRAY_FLAGS(page_pools, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_BH);
static u32 page_pools_next_id;

/* Is @pool shown in @net? */
static bool page_pool_shown_in(const struct page_pool *pool,
			       const struct net *net)
{
	return pool->user.netdev && net_eq(dev_net(pool->user.netdev), net);
}

/* A pool as one message reports it: the in-flight count is read once, so
 * that inflight and inflight-mem agree.
 */
struct page_pool_snapshot {
	const struct page_pool *pool;
	u64 inflight;
};

/* The device a shown pool is reported under: none (no ifindex) once it is
 * left to the loopback device.
 */
static const struct net_device *page_pool_dev(const struct page_pool *pool)
{
	const struct net_device *netdev = pool->user.netdev;

	return netdev == dev_net(netdev)->loopback_dev ? NULL : netdev;
}

static const struct page_pool *snap_pool(const void *obj)
{
	return ((const struct page_pool_snapshot *)obj)->pool;
}

static bool page_pool_id(const void *obj, const struct netdev_nl_attr *attr,
			 u64 *val)
{
	*val = snap_pool(obj)->user.id;
	return true;
}

static bool page_pool_ifindex(const void *obj,
			      const struct netdev_nl_attr *attr, u64 *val)
{
	const struct net_device *netdev = page_pool_dev(snap_pool(obj));

	*val = netdev ? netdev->ifindex : 0;
	return netdev;
}

static bool page_pool_napi_id(const void *obj,
			      const struct netdev_nl_attr *attr, u64 *val)
{
	const struct page_pool *pool = snap_pool(obj);

	*val = pool->user.napi_id;
	return *val && !pool->user.detached;
}

static bool page_pool_inflight_attr(const void *obj,
				    const struct netdev_nl_attr *attr,
				    u64 *val)
{
	*val = ((const struct page_pool_snapshot *)obj)->inflight;
	return true;
}

static bool page_pool_inflight_mem(const void *obj,
				   const struct netdev_nl_attr *attr, u64 *val)
{
	const struct page_pool_snapshot *snap = obj;

	*val = snap->inflight * (PAGE_SIZE << snap->pool->p.order);
	return true;
}

static bool page_pool_detach_time(const void *obj,
				  const struct netdev_nl_attr *attr, u64 *val)
{
	const struct page_pool *pool = snap_pool(obj);

	*val = pool->user.detach_time;
	return pool->user.detached;
}

static bool page_pool_dmabuf(const void *obj,
			     const struct netdev_nl_attr *attr, u64 *val)
{
	*val = net_devmem_pool_binding_id(snap_pool(obj));
	return *val;
}

static const struct netdev_nl_attr page_pool_attrs[] = {
	{ NETDEV_A_PAGE_POOL_ID, true, page_pool_id },
	{ NETDEV_A_PAGE_POOL_IFINDEX, false, page_pool_ifindex },
	{ NETDEV_A_PAGE_POOL_NAPI_ID, true, page_pool_napi_id },
	{ NETDEV_A_PAGE_POOL_INFLIGHT, true, page_pool_inflight_attr },
	{ NETDEV_A_PAGE_POOL_INFLIGHT_MEM, true, page_pool_inflight_mem },
	{ NETDEV_A_PAGE_POOL_DETACH_TIME, true, page_pool_detach_time },
	{ NETDEV_A_PAGE_POOL_DMABUF, false, page_pool_dmabuf },
};

static const struct netdev_nl_obj_desc page_pool_desc = {
	.cmd = NETDEV_CMD_PAGE_POOL_GET,
	.attrs = page_pool_attrs,
	.n_attrs = ARRAY_SIZE(page_pool_attrs),
};

/* A pool's counters, read once for one message. */
struct page_pool_stats_obj {
	const struct page_pool *pool;
	struct page_pool_stats stats;
};

/* NETDEV_A_PAGE_POOL_STATS_INFO: the nest naming the pool. */
static int page_pool_stats_info(struct sk_buff *msg,
				const struct netdev_nl_attr *attr,
				const void *obj)
{
	const struct page_pool *pool =
		((const struct page_pool_stats_obj *)obj)->pool;
	const struct net_device *netdev = page_pool_dev(pool);
	struct nlattr *info;

	info = nla_nest_start(msg, attr->type);
	if (!info ||
	    netdev_nl_put_uint(msg, NETDEV_A_PAGE_POOL_ID, pool->user.id) ||
	    (netdev &&
	     nla_put_u32(msg, NETDEV_A_PAGE_POOL_IFINDEX, netdev->ifindex)))
		return -EMSGSIZE;
	nla_nest_end(msg, info);
	return 0;
}

static bool page_pool_stats_counter(const void *obj,
				    const struct netdev_nl_attr *attr,
				    u64 *val)
{
	*val = *(const u64 *)(obj + attr->offset);
	return true;
}

#define PAGE_POOL_STAT(name, member) {					\
	.type = NETDEV_A_PAGE_POOL_STATS_##name,			\
	.is_uint = true,						\
	.get = page_pool_stats_counter,					\
	.offset = offsetof(struct page_pool_stats_obj, stats.member),	\
}

static const struct netdev_nl_attr page_pool_stats_attrs[] = {
	{ .type = NETDEV_A_PAGE_POOL_STATS_INFO, .put = page_pool_stats_info },
	PAGE_POOL_STAT(ALLOC_FAST, alloc_stats.fast),
	PAGE_POOL_STAT(ALLOC_SLOW, alloc_stats.slow),
	PAGE_POOL_STAT(ALLOC_SLOW_HIGH_ORDER, alloc_stats.slow_high_order),
	PAGE_POOL_STAT(ALLOC_EMPTY, alloc_stats.empty),
	PAGE_POOL_STAT(ALLOC_REFILL, alloc_stats.refill),
	PAGE_POOL_STAT(ALLOC_WAIVE, alloc_stats.waive),
	PAGE_POOL_STAT(RECYCLE_CACHED, recycle_stats.cached),
	PAGE_POOL_STAT(RECYCLE_CACHE_FULL, recycle_stats.cache_full),
	PAGE_POOL_STAT(RECYCLE_RING, recycle_stats.ring),
	PAGE_POOL_STAT(RECYCLE_RING_FULL, recycle_stats.ring_full),
	PAGE_POOL_STAT(RECYCLE_RELEASED_REFCNT, recycle_stats.released_refcnt),
};

static const struct netdev_nl_obj_desc page_pool_stats_desc = {
	.cmd = NETDEV_CMD_PAGE_POOL_STATS_GET,
	.attrs = page_pool_stats_attrs,
	.n_attrs = ARRAY_SIZE(page_pool_stats_attrs),
};

#ifdef CONFIG_PAGE_POOL_STATS
static int page_pool_stats_msg(struct sk_buff *msg, struct page_pool *pool,
			       u32 portid, u32 seq, int flags)
{
	struct page_pool_stats_obj so = { .pool = pool };

	page_pool_get_stats(pool, &so.stats);
	return netdev_nl_write(msg, &page_pool_stats_desc, &so, portid, seq,
			       flags, NETDEV_CMD_PAGE_POOL_STATS_GET);
}
#else
static int page_pool_stats_msg(struct sk_buff *msg, struct page_pool *pool,
			       u32 portid, u32 seq, int flags)
{
	return -EOPNOTSUPP;
}
#endif

/* Writes one message about @pool with @desc; the caller holds the pool
 * list's lock.
 */
static int page_pool_msg(struct sk_buff *msg, struct page_pool *pool,
			 const struct netdev_nl_obj_desc *desc, u32 portid,
			 u32 seq, int flags, u8 cmd)
{
	struct page_pool_snapshot snap = {
		.pool = pool,
		.inflight = max(page_pool_inflight(pool, false), 0),
	};

	if (desc == &page_pool_stats_desc)
		return page_pool_stats_msg(msg, pool, portid, seq, flags);
	return netdev_nl_write(msg, desc, &snap, portid, seq, flags, cmd);
}

/* Announces @pool to the "page-pool" group of its namespace; the caller
 * holds the pool list's lock.
 */
static void page_pool_notify(struct page_pool *pool, u8 cmd)
{
	struct sk_buff *ntf;
	struct net *net;

	if (!pool->user.netdev)
		return;
	net = dev_net(pool->user.netdev);
	if (!netdev_nl_has_listeners(net, NETDEV_NLGRP_PAGE_POOL))
		return;

	ntf = genlmsg_new(GENLMSG_DEFAULT_SIZE, GFP_ATOMIC);
	if (!ntf)
		return;
	if (page_pool_msg(ntf, pool, &page_pool_desc, 0, 0, 0, cmd)) {
		nlmsg_free(ntf);
		return;
	}
	netdev_nl_notify(ntf, net, NETDEV_NLGRP_PAGE_POOL);
}

/* A do request: the pool @id_attr names, written with @desc. */
static int page_pool_do(struct genl_info *info, const struct nlattr *id_attr,
			const struct netdev_nl_obj_desc *desc)
{
	struct page_pool *pool;
	struct sk_buff *rsp;
	int err;

	rsp = genlmsg_new(GENLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!rsp)
		return -ENOMEM;

	xa_lock_bh(&page_pools);
	pool = xa_load(&page_pools, netdev_nl_get_uint(id_attr));
	if (pool && page_pool_shown_in(pool, genl_info_net(info))) {
		err = page_pool_msg(rsp, pool, desc, info->snd_portid,
				    info->snd_seq, 0, desc->cmd);
	} else {
		NL_SET_BAD_ATTR(info->extack, id_attr);
		err = -ENOENT;
	}
	xa_unlock_bh(&page_pools);

	if (err) {
		nlmsg_free(rsp);
		return err;
	}
	return genlmsg_reply(rsp, info);
}

/* Pools a dump looks at per hold of the list's lock: other namespaces'
 * pools are skipped under it, and there may be many of them.
 */
#define PAGE_POOL_DUMP_BATCH	64

/* A dump: every pool shown in the caller's namespace, by id, resuming at
 * cb->args[0]. The lock is let go every PAGE_POOL_DUMP_BATCH pools; the
 * walk picks up again by id, so no pool pointer is kept across.
 */
static int page_pool_dump(struct sk_buff *skb, struct netlink_callback *cb,
			  const struct netdev_nl_obj_desc *desc)
{
	struct net *net = sock_net(skb->sk);
	unsigned long id = cb->args[0];
	struct page_pool *pool;
	unsigned int seen = 0;
	int err = 0;

	xa_lock_bh(&page_pools);
	for (pool = xa_find(&page_pools, &id, ULONG_MAX, XA_PRESENT); pool;
	     pool = xa_find_after(&page_pools, &id, ULONG_MAX, XA_PRESENT)) {
		if (++seen % PAGE_POOL_DUMP_BATCH == 0) {
			xa_unlock_bh(&page_pools);
			cond_resched();
			xa_lock_bh(&page_pools);
			pool = xa_load(&page_pools, id);
			if (!pool)
				continue;
		}
		if (!page_pool_shown_in(pool, net))
			continue;
		err = page_pool_msg(skb, pool, desc,
				    NETLINK_CB(cb->skb).portid,
				    cb->nlh->nlmsg_seq, NLM_F_MULTI, desc->cmd);
		if (err)
			break;
		cb->args[0] = id + 1;
	}
	xa_unlock_bh(&page_pools);

	if (err == -EMSGSIZE && skb->len)
		return skb->len;
	return err;
}

/**
 * netdev_nl_page_pool_get_doit() - page-pool-get, one pool by id
 * @skb: the request
 * @info: its attributes (NETDEV_A_PAGE_POOL_ID)
 *
 * Return: 0 with the reply sent, -ENOENT when no pool of the caller's
 * namespace has the id.
 */
int netdev_nl_page_pool_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	if (GENL_REQ_ATTR_CHECK(info, NETDEV_A_PAGE_POOL_ID))
		return -EINVAL;
	return page_pool_do(info, info->attrs[NETDEV_A_PAGE_POOL_ID],
			    &page_pool_desc);
}

/**
 * netdev_nl_page_pool_get_dumpit() - page-pool-get, every pool
 * @skb: the message to fill
 * @cb: the dump's state
 *
 * Return: the message's length while there is more, 0 at the end, or a
 * negative errno.
 */
int netdev_nl_page_pool_get_dumpit(struct sk_buff *skb,
				   struct netlink_callback *cb)
{
	return page_pool_dump(skb, cb, &page_pool_desc);
}

/**
 * netdev_nl_page_pool_stats_get_doit() - page-pool-stats-get, one pool
 * @skb: the request
 * @info: its attributes: NETDEV_A_PAGE_POOL_STATS_INFO, a nest holding
 *	the pool's NETDEV_A_PAGE_POOL_ID
 *
 * Return: 0 with the reply sent, -EINVAL without a pool id, -ENOENT when
 * no pool of the caller's namespace has it, -EOPNOTSUPP in a kernel
 * without page pool statistics.
 */
int netdev_nl_page_pool_stats_get_doit(struct sk_buff *skb,
				       struct genl_info *info)
{
	struct nlattr *tb[NETDEV_A_PAGE_POOL_IFINDEX + 1];
	struct nlattr *nest;
	int err;

	if (!IS_ENABLED(CONFIG_PAGE_POOL_STATS))
		return -EOPNOTSUPP;
	if (GENL_REQ_ATTR_CHECK(info, NETDEV_A_PAGE_POOL_STATS_INFO))
		return -EINVAL;
	nest = info->attrs[NETDEV_A_PAGE_POOL_STATS_INFO];
	err = nla_parse_nested(tb, ARRAY_SIZE(tb) - 1, nest,
			       netdev_page_pool_info_nl_policy, info->extack);
	if (err)
		return err;
	if (tb[NETDEV_A_PAGE_POOL_IFINDEX]) {
		NL_SET_ERR_MSG_ATTR(info->extack, tb[NETDEV_A_PAGE_POOL_IFINDEX],
				    "Name the pool by its id only");
		return -EINVAL;
	}
	if (!tb[NETDEV_A_PAGE_POOL_ID]) {
		NL_SET_ERR_MSG_ATTR(info->extack, nest, "Missing the pool's id");
		return -EINVAL;
	}
	return page_pool_do(info, tb[NETDEV_A_PAGE_POOL_ID],
			    &page_pool_stats_desc);
}

/**
 * netdev_nl_page_pool_stats_get_dumpit() - page-pool-stats-get, every pool
 * @skb: the message to fill
 * @cb: the dump's state
 *
 * Return: the message's length while there is more, 0 at the end, or a
 * negative errno.
 */
int netdev_nl_page_pool_stats_get_dumpit(struct sk_buff *skb,
					 struct netlink_callback *cb)
{
	if (!IS_ENABLED(CONFIG_PAGE_POOL_STATS))
		return -EOPNOTSUPP;
	return page_pool_dump(skb, cb, &page_pool_stats_desc);
}

/**
 * page_pool_list() - give a new pool its id and show it
 * @pool: the pool, fully set up by page_pool_init()
 *
 * Context: process context (page_pool_create()).
 * Return: 0, or -ENOMEM / -EBUSY when it cannot get an id.
 */
int page_pool_list(struct page_pool *pool)
{
	int err;

	xa_lock_bh(&page_pools);
	err = __xa_alloc_cyclic(&page_pools, &pool->user.id, pool,
				xa_limit_32b, &page_pools_next_id, GFP_KERNEL);
	if (err >= 0) {
		/* a device that is not (or no longer) registered would never
		 * tell us it goes away
		 */
		if (pool->p.netdev &&
		    pool->p.netdev->reg_state == NETREG_REGISTERED)
			pool->user.netdev = pool->p.netdev;
		pool->user.napi_id = pool->p.napi ?
				     READ_ONCE(pool->p.napi->napi_id) : 0;
		page_pool_notify(pool, NETDEV_CMD_PAGE_POOL_ADD_NTF);
		err = 0;
	}
	xa_unlock_bh(&page_pools);
	return err;
}

/**
 * page_pool_detached() - note that the pool's driver destroyed it
 * @pool: the pool; it lives on until its buffers come back
 *
 * Context: process context, or softirq (an RCU callback).
 */
void page_pool_detached(struct page_pool *pool)
{
	xa_lock_bh(&page_pools);
	pool->user.detach_time = ktime_get_boottime_seconds();
	pool->user.detached = true;
	page_pool_notify(pool, NETDEV_CMD_PAGE_POOL_CHANGE_NTF);
	xa_unlock_bh(&page_pools);
}

/**
 * page_pool_unlist() - take a pool that is being freed off the list
 * @pool: the pool
 *
 * Context: process context, or softirq (an RCU callback).
 */
void page_pool_unlist(struct page_pool *pool)
{
	xa_lock_bh(&page_pools);
	page_pool_notify(pool, NETDEV_CMD_PAGE_POOL_DEL_NTF);
	__xa_erase(&page_pools, pool->user.id);
	xa_unlock_bh(&page_pools);
}

/* The device that pools of @netdev are shown under once @netdev is gone:
 * the loopback device of its namespace while that lives, else none.
 */
static struct net_device *page_pool_heir(struct net_device *netdev)
{
	struct net_device *lo = dev_net(netdev)->loopback_dev;

	if (!lo || lo == netdev || lo->reg_state != NETREG_REGISTERED)
		return NULL;
	return lo;
}

/* A device unregistering (not merely changing namespace) leaves its pools
 * to its namespace's loopback device: they may outlive it.
 */
static int page_pool_netdevice_event(struct notifier_block *nb,
				     unsigned long event, void *ptr)
{
	struct net_device *netdev = netdev_notifier_info_to_dev(ptr);
	struct net_device *heir;
	struct page_pool *pool;
	unsigned long id;

	if (event != NETDEV_UNREGISTER ||
	    netdev->reg_state != NETREG_UNREGISTERING)
		return NOTIFY_DONE;

	heir = page_pool_heir(netdev);
	xa_lock_bh(&page_pools);
	xa_for_each(&page_pools, id, pool) {
		if (pool->user.netdev != netdev)
			continue;
		pool->user.netdev = heir;
		pool->user.napi_id = 0;
		page_pool_notify(pool, NETDEV_CMD_PAGE_POOL_CHANGE_NTF);
	}
	xa_unlock_bh(&page_pools);
	return NOTIFY_OK;
}

static struct notifier_block page_pool_netdevice_nb = {
	.notifier_call = page_pool_netdevice_event,
};

static int __init page_pool_user_init(void)
{
	return register_netdevice_notifier(&page_pool_netdevice_nb);
}
subsys_initcall(page_pool_user_init);
