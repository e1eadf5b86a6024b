/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The netdev netlink family's helpers for the files that answer some of
 * its commands (net/core/page_pool_user.c).
 */
#ifndef _NET_CORE_NETDEV_GENL_H
#define _NET_CORE_NETDEV_GENL_H

#include <linux/types.h>
#include <net/genetlink.h>

extern const struct nla_policy netdev_page_pool_info_nl_policy[];

/* The family's multicast groups, in netdev_nl_mcgrps[] order. */
enum netdev_nl_group {
	NETDEV_NLGRP_MGMT,
	NETDEV_NLGRP_PAGE_POOL,
};

/**
 * struct netdev_nl_attr - one attribute of a get command's reply
 * @type: the attribute
 * @is_uint: of the spec's "uint" type (4 or 8 bytes), else a u32
 * @get: reads its value from the object; false when it is absent
 * @offset: where @get finds the value in the object, for getters shared
 *	by several attributes
 * @put: instead of @get, writes the attribute itself (a nest); returns 0
 *	or -EMSGSIZE
 */
struct netdev_nl_attr {
	u16 type;
	bool is_uint;
	bool (*get)(const void *obj, const struct netdev_nl_attr *attr,
		    u64 *val);
	size_t offset;
	int (*put)(struct sk_buff *msg, const struct netdev_nl_attr *attr,
		   const void *obj);
};

/**
 * struct netdev_nl_obj_desc - how a get command writes one object
 * @cmd: the command of its messages
 * @attrs: its attributes, in the order they are written
 * @n_attrs: entries in @attrs
 */
struct netdev_nl_obj_desc {
	u8 cmd;
	const struct netdev_nl_attr *attrs;
	unsigned int n_attrs;
};

int netdev_nl_write(struct sk_buff *msg, const struct netdev_nl_obj_desc *desc,
		    const void *obj, u32 portid, u32 seq, int flags, u8 cmd);
int netdev_nl_put_uint(struct sk_buff *msg, int attrtype, u64 value);
u64 netdev_nl_get_uint(const struct nlattr *attr);
int netdev_nl_check_uint(const struct nlattr *attr,
			 struct netlink_ext_ack *extack);
int netdev_nl_check_id(const struct nlattr *attr,
		       struct netlink_ext_ack *extack);
bool netdev_nl_has_listeners(struct net *net, enum netdev_nl_group group);
void netdev_nl_notify(struct sk_buff *ntf, struct net *net,
		      enum netdev_nl_group group);

#ifdef CONFIG_PAGE_POOL
int netdev_nl_page_pool_get_doit(struct sk_buff *skb, struct genl_info *info);
int netdev_nl_page_pool_get_dumpit(struct sk_buff *skb,
				   struct netlink_callback *cb);
int netdev_nl_page_pool_stats_get_doit(struct sk_buff *skb,
				       struct genl_info *info);
int netdev_nl_page_pool_stats_get_dumpit(struct sk_buff *skb,
					 struct netlink_callback *cb);
#else
static inline int netdev_nl_page_pool_get_doit(struct sk_buff *skb,
					       struct genl_info *info)
{
	return -EOPNOTSUPP;
}

static inline int netdev_nl_page_pool_get_dumpit(struct sk_buff *skb,
						 struct netlink_callback *cb)
{
	return -EOPNOTSUPP;
}

static inline int netdev_nl_page_pool_stats_get_doit(struct sk_buff *skb,
						     struct genl_info *info)
{
	return -EOPNOTSUPP;
}

static inline int
netdev_nl_page_pool_stats_get_dumpit(struct sk_buff *skb,
				     struct netlink_callback *cb)
{
	return -EOPNOTSUPP;
}
#endif

#endif /* _NET_CORE_NETDEV_GENL_H */
