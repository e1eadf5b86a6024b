// SPDX-License-Identifier: GPL-2.0
/*
 * igb: ethtool -N rules for TCP flows, carried out by the RSS redirection
 * table (RETA).
 *
 * The 82576 (and QEMU's model of it) offers no filter the driver can use
 * to send one TCP flow to a queue, but it does RSS: for a TCP/IPv4 or
 * TCP/IPv6 frame the NIC computes the Toeplitz hash of source address,
 * destination address, source port and destination port (the 4-tuple hash
 * types igb_setup_mrqc() enables in MRQC) with the key in RSSRK, and the
 * low 7 bits of the hash pick one of the 128 RETA entries, which names the
 * RX queue. A rule for one fully specified TCP 4-tuple is carried out by
 * hashing the tuple the same way and pointing that RETA entry, the flow's
 * bucket, at the rule's queue.
 *
 * Limitation: every other flow hashing to the same bucket (1/128 of the
 * RSS spread traffic, on average) follows the rule to its queue. Two rules
 * whose flows share a bucket must therefore name the same queue.
 *
 * adapter->rss_indir_tbl keeps the table without the rules (the default
 * one or the one given with ethtool -X; ethtool -x reports it), and the
 * rules are laid over it by igb_write_rss_indir_tbl() every time the RETA
 * is written. Deleting a rule so gives its bucket back to that table, and
 * a new table (ethtool -X, or the default recomputed for a new number of
 * queues) keeps the rules. Rules whose queue no longer exists are dropped
 * by igb_rss_steer_prune().
 *
 * The rules live in adapter->rss_steer[], indexed by rule location; they
 * share the locations with the i350/i210 filters of nfc_filter_list.
 * Rules are added and deleted under RTNL, as every ethtool op runs.
 */

#include <linux/ethtool.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <linux/string.h>
#include <asm/unaligned.h>

#include "igb.h"

#define IGB_RSS_KEY_LEN		(IGB_RSS_KEY_WORDS * 4)

/* Longest hash input, TCP/IPv6: two 16-byte addresses and two ports */
#define IGB_RSS_INPUT_MAX	36

/**
 * igb_rss_steer_flow - is this rule's flow type one of the RETA rules?
 * @fsp: the flow spec of an ethtool -N rule
 *
 * Return: true for TCP over IPv4 or IPv6, with or without extension flags
 * (igb_rss_steer_add() refuses those).
 */
bool igb_rss_steer_flow(const struct ethtool_rx_flow_spec *fsp)
{
	u32 flow = fsp->flow_type & ~(FLOW_EXT | FLOW_MAC_EXT | FLOW_RSS);

	return flow == TCP_V4_FLOW || flow == TCP_V6_FLOW;
}

/* The key as the NIC uses it: byte n of the key is byte n % 4, counted
 * from the least significant one, of RSSRK(n / 4).
 */
static void igb_rss_key_bytes(const struct igb_adapter *adapter, u8 *key)
{
	unsigned int i;

	for (i = 0; i < IGB_RSS_KEY_LEN; i++)
		key[i] = (u8)(adapter->rss_key[i / 4] >> (8 * (i % 4)));
}

/* Toeplitz hash of @len input bytes (at most IGB_RSS_KEY_LEN - 4): for
 * every input bit that is set, most significant bit of byte 0 first, XOR
 * in the 32 key bits that start at the same bit position of the key, the
 * key read as one big-endian bit string.
 */
static u32 igb_rss_toeplitz(const u8 *key, const u8 *input, unsigned int len)
{
	u32 window = get_unaligned_be32(key);
	u32 hash = 0;
	unsigned int i;
	int bit;

	for (i = 0; i < len; i++) {
		for (bit = 7; bit >= 0; bit--) {
			if (input[i] & BIT(bit))
				hash ^= window;
			/* slide the window one key bit further */
			window <<= 1;
			if (key[i + 4] & BIT(bit))
				window |= 1;
		}
	}
	return hash;
}

/* The RETA entry a flow of a valid rule lands in: the hash input is laid
 * out as the NIC builds it, source address, destination address, source
 * port, destination port, all in network byte order.
 */
static u8 igb_rss_steer_bucket(const struct igb_adapter *adapter,
			       const struct ethtool_rx_flow_spec *fs)
{
	u8 input[IGB_RSS_INPUT_MAX];
	u8 key[IGB_RSS_KEY_LEN];
	unsigned int len = 0;

	/* the key window must not run off the end of the key */
	BUILD_BUG_ON(sizeof(input) + 4 > sizeof(key));

	if (fs->flow_type == TCP_V4_FLOW) {
		const struct ethtool_tcpip4_spec *v4 = &fs->h_u.tcp_ip4_spec;

		memcpy(&input[len], &v4->ip4src, sizeof(v4->ip4src));
		len += sizeof(v4->ip4src);
		memcpy(&input[len], &v4->ip4dst, sizeof(v4->ip4dst));
		len += sizeof(v4->ip4dst);
		memcpy(&input[len], &v4->psrc, sizeof(v4->psrc));
		len += sizeof(v4->psrc);
		memcpy(&input[len], &v4->pdst, sizeof(v4->pdst));
		len += sizeof(v4->pdst);
	} else {
		const struct ethtool_tcpip6_spec *v6 = &fs->h_u.tcp_ip6_spec;

		memcpy(&input[len], v6->ip6src, sizeof(v6->ip6src));
		len += sizeof(v6->ip6src);
		memcpy(&input[len], v6->ip6dst, sizeof(v6->ip6dst));
		len += sizeof(v6->ip6dst);
		memcpy(&input[len], &v6->psrc, sizeof(v6->psrc));
		len += sizeof(v6->psrc);
		memcpy(&input[len], &v6->pdst, sizeof(v6->pdst));
		len += sizeof(v6->pdst);
	}

	igb_rss_key_bytes(adapter, key);
	return igb_rss_toeplitz(key, input, len) & (IGB_RETA_SIZE - 1);
}

static bool igb_rss_steer_addr6_full(const __be32 *mask)
{
	return (mask[0] & mask[1] & mask[2] & mask[3]) == htonl(0xffffffff);
}

/* The hash covers the whole 4-tuple: a rule must give all of it, and
 * nothing else (TOS / traffic class, VLAN, MAC, RSS context).
 */
static bool igb_rss_steer_spec_ok(const struct ethtool_rx_flow_spec *fsp)
{
	const struct ethtool_tcpip4_spec *m4 = &fsp->m_u.tcp_ip4_spec;
	const struct ethtool_tcpip6_spec *m6 = &fsp->m_u.tcp_ip6_spec;

	switch (fsp->flow_type) {
	case TCP_V4_FLOW:
		return m4->ip4src == htonl(0xffffffff) &&
		       m4->ip4dst == htonl(0xffffffff) &&
		       m4->psrc == htons(0xffff) &&
		       m4->pdst == htons(0xffff) &&
		       !m4->tos;
	case TCP_V6_FLOW:
		return igb_rss_steer_addr6_full(m6->ip6src) &&
		       igb_rss_steer_addr6_full(m6->ip6dst) &&
		       m6->psrc == htons(0xffff) &&
		       m6->pdst == htons(0xffff) &&
		       !m6->tclass;
	default:
		return false;
	}
}

/* The rule as it is kept and reported: the 4-tuple and its masks only. */
static void igb_rss_steer_copy_spec(struct ethtool_rx_flow_spec *to,
				    const struct ethtool_rx_flow_spec *from)
{
	memset(to, 0, sizeof(*to));
	to->flow_type = from->flow_type;
	to->ring_cookie = from->ring_cookie;
	to->location = from->location;

	if (from->flow_type == TCP_V4_FLOW) {
		const struct ethtool_tcpip4_spec *h = &from->h_u.tcp_ip4_spec;
		const struct ethtool_tcpip4_spec *m = &from->m_u.tcp_ip4_spec;

		to->h_u.tcp_ip4_spec.ip4src = h->ip4src;
		to->h_u.tcp_ip4_spec.ip4dst = h->ip4dst;
		to->h_u.tcp_ip4_spec.psrc = h->psrc;
		to->h_u.tcp_ip4_spec.pdst = h->pdst;
		to->m_u.tcp_ip4_spec.ip4src = m->ip4src;
		to->m_u.tcp_ip4_spec.ip4dst = m->ip4dst;
		to->m_u.tcp_ip4_spec.psrc = m->psrc;
		to->m_u.tcp_ip4_spec.pdst = m->pdst;
	} else {
		const struct ethtool_tcpip6_spec *h = &from->h_u.tcp_ip6_spec;
		const struct ethtool_tcpip6_spec *m = &from->m_u.tcp_ip6_spec;

		memcpy(to->h_u.tcp_ip6_spec.ip6src, h->ip6src,
		       sizeof(h->ip6src));
		memcpy(to->h_u.tcp_ip6_spec.ip6dst, h->ip6dst,
		       sizeof(h->ip6dst));
		to->h_u.tcp_ip6_spec.psrc = h->psrc;
		to->h_u.tcp_ip6_spec.pdst = h->pdst;
		memcpy(to->m_u.tcp_ip6_spec.ip6src, m->ip6src,
		       sizeof(m->ip6src));
		memcpy(to->m_u.tcp_ip6_spec.ip6dst, m->ip6dst,
		       sizeof(m->ip6dst));
		to->m_u.tcp_ip6_spec.psrc = m->psrc;
		to->m_u.tcp_ip6_spec.pdst = m->pdst;
	}
}

static void igb_rss_steer_forget(struct igb_adapter *adapter,
				 struct igb_rss_steer_rule *rule)
{
	memset(rule, 0, sizeof(*rule));
	adapter->rss_steer_count--;
}

/**
 * igb_rss_steer_add - add or replace a TCP flow rule
 * @adapter: the adapter; RTNL held
 * @fsp: the rule: TCP_V4_FLOW or TCP_V6_FLOW with the full 4-tuple, an RX
 *	 queue in ring_cookie and a location
 *
 * A rule at the same location is replaced. The flow's RETA entry is
 * pointed at the queue at once.
 *
 * Return: 0; -EOPNOTSUPP with SR-IOV VFs (the RETA is then shared with the
 * VMDq pools); -EINVAL for a partial 4-tuple, any other match field, a
 * drop action, a queue or location out of range; -EEXIST when another
 * location has the same flow; -EBUSY when another rule points the same
 * RETA entry at a different queue.
 */
int igb_rss_steer_add(struct igb_adapter *adapter,
		      const struct ethtool_rx_flow_spec *fsp)
{
	struct igb_rss_steer_rule *rule;
	struct ethtool_rx_flow_spec fs;
	u32 loc = fsp->location;
	unsigned int i;
	u8 bucket;

	ASSERT_RTNL();

	if (adapter->vfs_allocated_count)
		return -EOPNOTSUPP;
	if (!igb_rss_steer_spec_ok(fsp))
		return -EINVAL;
	if (fsp->ring_cookie == RX_CLS_FLOW_DISC ||
	    fsp->ring_cookie >= adapter->num_rx_queues)
		return -EINVAL;
	if (loc >= IGB_MAX_RSS_STEER_RULES)
		return -EINVAL;

	igb_rss_steer_copy_spec(&fs, fsp);
	bucket = igb_rss_steer_bucket(adapter, &fs);

	for (i = 0; i < IGB_MAX_RSS_STEER_RULES; i++) {
		rule = &adapter->rss_steer[i];
		if (!rule->in_use || i == loc)
			continue;
		if (rule->fs.flow_type == fs.flow_type &&
		    !memcmp(&rule->fs.h_u, &fs.h_u, sizeof(fs.h_u)))
			return -EEXIST;
		if (rule->bucket == bucket && rule->queue != fs.ring_cookie) {
			netdev_err(adapter->netdev,
				   "rule %u: its flow shares RETA entry %u with rule %u, which uses queue %u\n",
				   loc, bucket, i, rule->queue);
			return -EBUSY;
		}
	}

	rule = &adapter->rss_steer[loc];
	if (!rule->in_use)
		adapter->rss_steer_count++;
	rule->fs = fs;
	rule->bucket = bucket;
	rule->queue = (u8)fs.ring_cookie;
	rule->in_use = true;
	netdev_dbg(adapter->netdev, "rule %u: RETA entry %u -> queue %u\n",
		   loc, bucket, rule->queue);

	igb_write_rss_indir_tbl(adapter);
	return 0;
}

/**
 * igb_rss_steer_del - delete a TCP flow rule
 * @adapter: the adapter; RTNL held
 * @loc: the rule's location
 *
 * The rule's RETA entry gets back the value of adapter->rss_indir_tbl,
 * unless another rule holds the same entry.
 *
 * Return: 0, or -ENOENT when @loc holds no such rule.
 */
int igb_rss_steer_del(struct igb_adapter *adapter, u32 loc)
{
	ASSERT_RTNL();

	if (loc >= IGB_MAX_RSS_STEER_RULES || !adapter->rss_steer[loc].in_use)
		return -ENOENT;

	igb_rss_steer_forget(adapter, &adapter->rss_steer[loc]);
	igb_write_rss_indir_tbl(adapter);
	return 0;
}

/**
 * igb_rss_steer_get - report a TCP flow rule
 * @adapter: the adapter; RTNL held
 * @fsp: in: the location asked for; out: the rule
 *
 * Return: 0, or -ENOENT when the location holds no such rule.
 */
int igb_rss_steer_get(struct igb_adapter *adapter,
		      struct ethtool_rx_flow_spec *fsp)
{
	u32 loc = fsp->location;

	if (loc >= IGB_MAX_RSS_STEER_RULES || !adapter->rss_steer[loc].in_use)
		return -ENOENT;

	*fsp = adapter->rss_steer[loc].fs;
	return 0;
}

/**
 * igb_rss_steer_apply - lay the TCP flow rules over an indirection table
 * @adapter: the adapter
 * @tbl: IGB_RETA_SIZE entries, a copy of adapter->rss_indir_tbl, about to
 *	 be written to the RETA
 *
 * Rules whose queue does not exist (any more) are left out, and so are all
 * rules while SR-IOV VFs are enabled.
 */
void igb_rss_steer_apply(struct igb_adapter *adapter, u8 *tbl)
{
	const struct igb_rss_steer_rule *rule;
	unsigned int i;

	if (adapter->vfs_allocated_count)
		return;

	for (i = 0; i < IGB_MAX_RSS_STEER_RULES; i++) {
		rule = &adapter->rss_steer[i];
		if (rule->in_use && rule->queue < adapter->num_rx_queues)
			tbl[rule->bucket & (IGB_RETA_SIZE - 1)] = rule->queue;
	}
}

/**
 * igb_rss_steer_prune - drop the rules whose queue no longer exists
 * @adapter: the adapter
 *
 * Called when the number of RX queues may have changed: from
 * igb_setup_mrqc(), before the RETA is written, and after ethtool -L.
 * RTNL is held on every path that can change the number of queues; the
 * one caller without it, PCI error recovery (igb_io_resume() -> igb_up()),
 * keeps the number of queues, so that nothing is dropped there.
 */
void igb_rss_steer_prune(struct igb_adapter *adapter)
{
	struct igb_rss_steer_rule *rule;
	unsigned int i;

	for (i = 0; i < IGB_MAX_RSS_STEER_RULES; i++) {
		rule = &adapter->rss_steer[i];
		if (!rule->in_use || rule->queue < adapter->num_rx_queues)
			continue;
		netdev_info(adapter->netdev,
			    "ethtool -N rule %u deleted: RX queue %u is gone\n",
			    i, rule->queue);
		igb_rss_steer_forget(adapter, rule);
	}
}
