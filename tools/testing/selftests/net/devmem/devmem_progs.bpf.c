// SPDX-License-Identifier: GPL-2.0
/*
 * BPF programs the devmem tests attach next to a bound RX queue.
 *
 * xdp_pass: does nothing; what matters is whether it may be attached.
 * tc_read_payload: tc ingress; tries to read four bytes well past the
 * headers of every large frame and counts, in payload_reads, the reads
 * that worked (key 0) and those the kernel refused (key 1).
 */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>

#define PAYLOAD_OFFSET	200

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} payload_reads SEC(".maps");

SEC("xdp")
int xdp_pass(struct xdp_md *ctx)
{
	return XDP_PASS;
}

SEC("tc")
int tc_read_payload(struct __sk_buff *skb)
{
	__u8 bytes[4];
	__u64 *count;
	__u32 key;

	if (skb->len < PAYLOAD_OFFSET + sizeof(bytes))
		return TC_ACT_OK;
	key = bpf_skb_load_bytes(skb, PAYLOAD_OFFSET, bytes, sizeof(bytes)) ?
	      1 : 0;
	count = bpf_map_lookup_elem(&payload_reads, &key);
	if (count)
		__sync_fetch_and_add(count, 1);
	return TC_ACT_OK;
}

char _license[] SEC("license") = "GPL";
