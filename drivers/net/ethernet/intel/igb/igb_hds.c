// SPDX-License-Identifier: GPL-2.0
/*
 * igb: header split (tcp-data-split) RX rings on a page pool, and the
 * queue management ops that restart one RX queue on new memory.
 *
 * With tcp-data-split on, every RX descriptor gets two buffers: a small
 * host-memory header buffer (a slot of ring->hdr_buf) and a payload buffer
 * from the ring's page pool. The page pool serves pages, or, when the
 * queue is bound to a dma-buf, the binding's net_iovs: then the payload is
 * written by the NIC straight into device memory and only the headers are
 * ever read by the CPU.
 *
 * hds-thresh (ethtool) picks the descriptor type. With 0, SRRCTL "header
 * split": every IP frame is split, TCP and UDP at their payload, other IP
 * frames after the IP header (SPH set, HDR_LEN bytes in the header buffer);
 * a frame that is not IP, or whose headers do not fit the header buffer
 * (HBO), goes whole to the payload buffers and the header buffer stays
 * unwritten. With hds-thresh 256 (the default), "header split always", a
 * frame that fits the 256-byte header buffer stays there whole (SPH clear,
 * HDR_LEN its length, nothing in the payload buffer), a frame that is not
 * split fills it and continues in the payload buffers, IP frames are
 * split as above.
 *
 * A frame longer than a payload buffer spans several descriptors: the
 * first one's header buffer has the headers, every one's payload buffer a
 * part of the payload (each becomes a fragment), the last one (EOP) the
 * checksum, hash and VLAN status. hdr_info is repeated on every one.
 */

#include <linux/debugfs.h>
#include <linux/etherdevice.h>
#include <linux/fault-inject.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <net/netdev_queues.h>
#include <net/page_pool.h>

#include "igb.h"

#define IGB_HDS_SPH		0x8000		/* hdr_info: header was split */
#define IGB_HDS_HBO		BIT(23)		/* status_error: header overflow */

/* Payload buffers are one page: the unit of a net_iov. */
#define IGB_HDS_PKT_SIZE	PAGE_SIZE

/**
 * igb_hds_srrctl - SRRCTL buffer and descriptor bits of a header split ring
 * @ring: the RX ring
 *
 * A header split ring always drops what arrives while it has no buffer
 * (DROP_EN): its memory provider may run dry for as long as user space
 * holds tokens, and a queue that does not drop holds frames in the packet
 * buffer the queues share and, with RX flow control on, sends pause
 * frames: every queue of the port would stall behind it.
 *
 * Return: BSIZEPACKET, BSIZEHEADER, DESCTYPE and DROP_EN for @ring.
 */
u32 igb_hds_srrctl(struct igb_ring *ring)
{
	u32 desctype = ring->hds_thresh ? E1000_SRRCTL_DESCTYPE_HDR_SPLIT_ALWAYS :
					  E1000_SRRCTL_DESCTYPE_HDR_SPLIT;

	return (IGB_HDS_HDR_SIZE << E1000_SRRCTL_BSIZEHDRSIZE_SHIFT) |
	       (IGB_HDS_PKT_SIZE >> E1000_SRRCTL_BSIZEPKT_SHIFT) | desctype |
	       E1000_SRRCTL_DROP_EN;
}

static struct page_pool *igb_hds_create_pool(struct igb_ring *ring)
{
	struct page_pool_params pp = {
		.flags		= PP_FLAG_DMA_MAP | PP_FLAG_DMA_SYNC_DEV |
				  PP_FLAG_ALLOW_UNREADABLE_NETMEM,
		.order		= 0,
		.pool_size	= ring->count,
		.nid		= dev_to_node(ring->dev),
		.dev		= ring->dev,
		.dma_dir	= DMA_FROM_DEVICE,
		.max_len	= IGB_HDS_PKT_SIZE,
		.netdev		= ring->netdev,
		.queue_idx	= ring->queue_index,
		.napi		= &ring->q_vector->napi,
	};

	return page_pool_create(&pp);
}

/**
 * igb_hds_setup_rx_resources - header buffers and page pool of an RX ring
 * @ring: the RX ring, its descriptors already allocated
 *
 * Return: 0 or a negative errno, with nothing allocated.
 */
int igb_hds_setup_rx_resources(struct igb_ring *ring)
{
	struct igb_adapter *adapter = netdev_priv(ring->netdev);
	struct page_pool *pp;

	ring->hds_thresh = adapter->hds_thresh;
	ring->rx_netmem = vcalloc(ring->count, sizeof(*ring->rx_netmem));
	if (!ring->rx_netmem)
		return -ENOMEM;

	ring->hdr_buf = dma_alloc_coherent(ring->dev,
					   ring->count * IGB_HDS_HDR_SIZE,
					   &ring->hdr_dma, GFP_KERNEL);
	if (!ring->hdr_buf)
		goto err_free_netmem;

	pp = igb_hds_create_pool(ring);
	if (IS_ERR(pp)) {
		dma_free_coherent(ring->dev, ring->count * IGB_HDS_HDR_SIZE,
				  ring->hdr_buf, ring->hdr_dma);
		ring->hdr_buf = NULL;
		vfree(ring->rx_netmem);
		ring->rx_netmem = NULL;
		return PTR_ERR(pp);
	}
	ring->pp = pp;
	return 0;

err_free_netmem:
	vfree(ring->rx_netmem);
	ring->rx_netmem = NULL;
	return -ENOMEM;
}

/**
 * igb_hds_clean_rx_ring - give every posted payload buffer back
 * @ring: the RX ring, stopped
 */
void igb_hds_clean_rx_ring(struct igb_ring *ring)
{
	u16 i;

	if (ring->skb) {
		dev_kfree_skb(ring->skb);
		ring->skb = NULL;
	}
	/* a ring whose rebuild failed has nothing left to clean */
	if (!ring->rx_netmem)
		return;
	for (i = 0; i < ring->count; i++) {
		if (!ring->rx_netmem[i])
			continue;
		page_pool_put_netmem(ring->pp, ring->rx_netmem[i], false);
		ring->rx_netmem[i] = 0;
	}
	memset(ring->desc, 0, ring->size);
	ring->hds_discard = false;
	ring->next_to_alloc = 0;
	ring->next_to_clean = 0;
	ring->next_to_use = 0;
}

/**
 * igb_hds_free_rx_resources - undo igb_hds_setup_rx_resources()
 * @ring: the RX ring, cleaned
 *
 * The page pool goes away once every buffer handed out (skbs, sockets)
 * has come back.
 */
void igb_hds_free_rx_resources(struct igb_ring *ring)
{
	clear_bit(IGB_RING_FLAG_RX_HDR_SPLIT, &ring->flags);
	page_pool_destroy(ring->pp);
	ring->pp = NULL;
	if (ring->hdr_buf)
		dma_free_coherent(ring->dev, ring->count * IGB_HDS_HDR_SIZE,
				  ring->hdr_buf, ring->hdr_dma);
	ring->hdr_buf = NULL;
	vfree(ring->rx_netmem);
	ring->rx_netmem = NULL;
}

/**
 * igb_hds_alloc_rx_buffers - post payload and header buffers
 * @ring: the RX ring
 * @count: number of descriptors to refill
 */
void igb_hds_alloc_rx_buffers(struct igb_ring *ring, u16 count)
{
	union e1000_adv_rx_desc *rx_desc;
	u16 i = ring->next_to_use;
	netmem_ref netmem;

	while (count--) {
		netmem = page_pool_dev_alloc_netmem(ring->pp);
		if (unlikely(!netmem)) {
			/* alloc_failed counts every failed allocation of
			 * the ring (skbs too), pp_alloc_fail the page pool
			 * (or its memory provider) running dry: a part of
			 * alloc_failed, which alone is qstats' rx-alloc-fail,
			 * so that one failure counts once there. Like
			 * alloc_failed in igb_main.c, not under rx_syncp:
			 * this also runs in process context (igb_configure()).
			 */
			ring->rx_stats.alloc_failed++;
			ring->rx_stats.pp_alloc_fail++;
			break;
		}
		ring->rx_netmem[i] = netmem;
		rx_desc = IGB_RX_DESC(ring, i);
		rx_desc->read.pkt_addr =
			cpu_to_le64(page_pool_get_dma_addr_netmem(netmem));
		/* aligned: the DD bit it overlays reads 0 until write-back */
		rx_desc->read.hdr_addr =
			cpu_to_le64(ring->hdr_dma + i * IGB_HDS_HDR_SIZE);
		if (++i == ring->count)
			i = 0;
	}

	if (ring->next_to_use != i) {
		ring->next_to_use = i;
		ring->next_to_alloc = i;
		/* descriptors must be written before the tail moves */
		dma_wmb();
		writel(i, ring->tail);
	}
}

/* Appends a payload buffer to @skb as its next fragment, or gives it back
 * to the pool when it holds nothing. False when @skb has no room for it:
 * the buffer went back, and the frame cannot be received.
 */
static bool igb_hds_add_frag(struct igb_ring *ring, struct sk_buff *skb,
			     netmem_ref netmem, unsigned int size)
{
	int nr_frags = skb_shinfo(skb)->nr_frags;

	if (!size || nr_frags == MAX_SKB_FRAGS) {
		page_pool_put_netmem(ring->pp, netmem, true);
		return !size;
	}
	/* device memory is never synced: the CPU does not read it */
	if (!netmem_is_net_iov(netmem))
		dma_sync_single_range_for_cpu(ring->dev,
					      page_pool_get_dma_addr_netmem(netmem),
					      0, size, DMA_FROM_DEVICE);
	skb_add_rx_frag_netmem(skb, nr_frags, netmem, 0, size,
			       IGB_HDS_PKT_SIZE);
	skb_mark_for_recycle(skb);
	return true;
}

/* A frame the NIC split at its payload: its headers, from the first
 * descriptor's header buffer, into the linear part. The payload buffers
 * follow as fragments.
 */
static struct sk_buff *igb_hds_split_skb(struct igb_ring *ring, u16 ntc,
					 unsigned int hdr_len)
{
	struct sk_buff *skb;

	skb = napi_alloc_skb(&ring->q_vector->napi, hdr_len);
	if (!skb) {
		ring->rx_stats.alloc_failed++;
		return NULL;
	}
	skb_put_data(skb, ring->hdr_buf + ntc * IGB_HDS_HDR_SIZE, hdr_len);
	return skb;
}

/* Bytes at the start of a frame the NIC did not split that its header
 * buffer holds: none with "header split" (the whole frame went to the
 * payload buffers), the first HDR_LEN, at most the header buffer, with
 * "header split always".
 */
static unsigned int igb_hds_unsplit_hdr_len(const struct igb_ring *ring,
					    unsigned int hdr_len)
{
	if (!ring->hds_thresh)
		return 0;
	return min_t(unsigned int, hdr_len, IGB_HDS_HDR_SIZE);
}

/* A frame the NIC did not split: the bytes of its header buffer, then those
 * of its first payload buffer, copied into the linear part (further payload
 * buffers follow as fragments). Its headers may be in the payload buffer:
 * in device memory, the frame cannot be received.
 */
static struct sk_buff *igb_hds_unsplit_skb(struct igb_ring *ring, u16 ntc,
					   netmem_ref netmem,
					   unsigned int hdr_len,
					   unsigned int size)
{
	unsigned int hdr_bytes = igb_hds_unsplit_hdr_len(ring, hdr_len);
	struct sk_buff *skb = NULL;
	struct page *page;

	if ((size && netmem_is_net_iov(netmem)) || hdr_bytes + size < ETH_HLEN) {
		ring->rx_stats.hds_drops++;
		goto out;
	}
	skb = napi_alloc_skb(&ring->q_vector->napi, hdr_bytes + size);
	if (!skb) {
		ring->rx_stats.alloc_failed++;
		goto out;
	}
	skb_put_data(skb, ring->hdr_buf + ntc * IGB_HDS_HDR_SIZE, hdr_bytes);
	if (size) {
		page = netmem_to_page(netmem);
		dma_sync_single_range_for_cpu(ring->dev,
					      page_pool_get_dma_addr(page), 0,
					      size, DMA_FROM_DEVICE);
		skb_put_data(skb, page_address(page), size);
	}
out:
	page_pool_put_netmem(ring->pp, netmem, true);
	return skb;
}

/* The first descriptor of a frame: its skb, which owns @netmem from now
 * on, or NULL (@netmem went back to the pool, the frame is dropped and
 * counted). hdr_info and HBO are the same on every descriptor of a frame,
 * but only the first one's header buffer is written.
 */
static struct sk_buff *igb_hds_start_frame(struct igb_ring *ring, u16 ntc,
					   netmem_ref netmem, u16 hdr_info,
					   u32 staterr, unsigned int size)
{
	unsigned int hdr_len = (hdr_info & E1000_RXDADV_HDRBUFLEN_MASK) >>
			       E1000_RXDADV_HDRBUFLEN_SHIFT;
	struct sk_buff *skb;

	if (!(hdr_info & IGB_HDS_SPH) || (staterr & IGB_HDS_HBO))
		return igb_hds_unsplit_skb(ring, ntc, netmem, hdr_len, size);

	if (hdr_len < ETH_HLEN || hdr_len > IGB_HDS_HDR_SIZE) {
		ring->rx_stats.hds_drops++;
		skb = NULL;
	} else {
		skb = igb_hds_split_skb(ring, ntc, hdr_len);
	}
	if (!skb) {
		page_pool_put_netmem(ring->pp, netmem, true);
		return NULL;
	}
	ring->rx_stats.hds_split++;
	igb_hds_add_frag(ring, skb, netmem, size);
	return skb;
}

/* Frames the MAC flagged as bad are dropped unless RXALL asks for them.
 * Short frames are not padded: the payload may be device memory.
 */
static bool igb_hds_frame_error(struct igb_ring *ring, u32 staterr)
{
	return (staterr & E1000_RXDEXT_ERR_FRAME_ERR_MASK) &&
	       !(ring->netdev->features & NETIF_F_RXALL);
}

/* Drops the frame being received; its descriptors up to the one with EOP
 * are dropped as they come, so that none is taken for a frame of its own
 * (only the first descriptor of a frame has headers).
 */
static void igb_hds_drop_frame(struct igb_ring *ring, u32 staterr)
{
	if (ring->skb) {
		dev_kfree_skb_any(ring->skb);
		ring->skb = NULL;
	}
	ring->hds_discard = !(staterr & E1000_RXD_STAT_EOP);
}

/* Takes one descriptor into the frame being received (ring->skb), or
 * starts one. Return: true when the frame is complete (EOP) in ring->skb.
 */
static bool igb_hds_take_desc(struct igb_ring *ring, u16 ntc,
			      netmem_ref netmem, u16 hdr_info, u32 staterr,
			      unsigned int size)
{
	if (ring->hds_discard) {
		ring->hds_discard = !(staterr & E1000_RXD_STAT_EOP);
		page_pool_put_netmem(ring->pp, netmem, true);
		return false;
	}
	if (size > IGB_HDS_PKT_SIZE) {
		ring->rx_stats.hds_drops++;
		page_pool_put_netmem(ring->pp, netmem, true);
		igb_hds_drop_frame(ring, staterr);
		return false;
	}
	if (!ring->skb) {
		ring->skb = igb_hds_start_frame(ring, ntc, netmem, hdr_info,
						staterr, size);
		if (!ring->skb) {
			igb_hds_drop_frame(ring, staterr);
			return false;
		}
	} else if (!igb_hds_add_frag(ring, ring->skb, netmem, size)) {
		ring->rx_stats.hds_drops++;
		igb_hds_drop_frame(ring, staterr);
		return false;
	}
	return staterr & E1000_RXD_STAT_EOP;
}

/**
 * igb_hds_clean_rx_irq - receive on a header split ring
 * @q_vector: the vector whose RX ring to clean
 * @budget: the NAPI budget
 *
 * Return: the number of frames received.
 */
int igb_hds_clean_rx_irq(struct igb_q_vector *q_vector, const int budget)
{
	struct igb_ring *ring = q_vector->rx.ring;
	unsigned int total_bytes = 0, total_packets = 0;
	unsigned int devmem_frames = 0;
	u16 unused;

	while (likely(total_packets < budget)) {
		union e1000_adv_rx_desc *rx_desc, wb;
		u16 ntc = ring->next_to_clean;
		struct sk_buff *skb;
		netmem_ref netmem;
		u32 staterr;

		rx_desc = IGB_RX_DESC(ring, ntc);
		staterr = le32_to_cpu(rx_desc->wb.upper.status_error);
		if (!(staterr & E1000_RXD_STAT_DD))
			break;
		/* nothing else of the descriptor before DD is seen */
		dma_rmb();

		/* the write-back (checksum, hash, VLAN) is used after the
		 * descriptor's status is cleared: an unposted descriptor must
		 * not look done next time
		 */
		wb = *rx_desc;
		rx_desc->wb.upper.status_error = 0;
		netmem = ring->rx_netmem[ntc];
		ring->rx_netmem[ntc] = 0;
		if (++ring->next_to_clean == ring->count)
			ring->next_to_clean = 0;

		if (!igb_hds_take_desc(ring, ntc, netmem,
				       le16_to_cpu(wb.wb.lower.lo_dword.hdr_info),
				       staterr, le16_to_cpu(wb.wb.upper.length)))
			continue;

		/* EOP: the last descriptor has the checksum, hash and VLAN */
		skb = ring->skb;
		ring->skb = NULL;
		if (igb_hds_frame_error(ring, staterr)) {
			dev_kfree_skb_any(skb);
			continue;
		}
		if (!skb_frags_readable(skb))
			devmem_frames++;
		total_bytes += skb->len;
		igb_process_skb_fields(ring, &wb, skb);
		napi_gro_receive(&q_vector->napi, skb);
		total_packets++;
	}

	u64_stats_update_begin(&ring->rx_syncp);
	ring->rx_stats.packets += total_packets;
	ring->rx_stats.bytes += total_bytes;
	ring->rx_stats.devmem_frames += devmem_frames;
	u64_stats_update_end(&ring->rx_syncp);
	q_vector->rx.total_packets += total_packets;
	q_vector->rx.total_bytes += total_bytes;

	/* Every poll refills what is unused, not just what it cleaned: a
	 * ring the provider left empty gets no more frames, so no more
	 * interrupts of its own, and fills again on the watchdog's.
	 */
	unused = igb_desc_unused(ring);
	if (unused)
		igb_hds_alloc_rx_buffers(ring, unused);
	return total_packets;
}

/* ---- queue management ops --------------------------------------------- */

/**
 * struct igb_rx_queue_mem - the memory of one header split RX ring
 * @desc: descriptor ring
 * @dma: its DMA address
 * @size: its size in bytes
 * @rx_netmem: payload buffer posted on each descriptor
 * @hdr_buf: header buffers
 * @hdr_dma: their DMA address
 * @pp: the page pool of the payload buffers
 * @count: descriptors in the ring
 */
struct igb_rx_queue_mem {
	void *desc;
	dma_addr_t dma;
	unsigned int size;
	netmem_ref *rx_netmem;
	u8 *hdr_buf;
	dma_addr_t hdr_dma;
	struct page_pool *pp;
	u16 count;
};

static void igb_rx_ring_to_mem(struct igb_ring *ring,
			       struct igb_rx_queue_mem *mem)
{
	mem->desc = ring->desc;
	mem->dma = ring->dma;
	mem->size = ring->size;
	mem->rx_netmem = ring->rx_netmem;
	mem->hdr_buf = ring->hdr_buf;
	mem->hdr_dma = ring->hdr_dma;
	mem->pp = ring->pp;
	mem->count = ring->count;
}

static void igb_rx_mem_to_ring(struct igb_rx_queue_mem *mem,
			       struct igb_ring *ring)
{
	ring->desc = mem->desc;
	ring->dma = mem->dma;
	ring->size = mem->size;
	ring->rx_netmem = mem->rx_netmem;
	ring->hdr_buf = mem->hdr_buf;
	ring->hdr_dma = mem->hdr_dma;
	ring->pp = mem->pp;
	ring->count = mem->count;
}

static int igb_queue_mem_alloc(struct net_device *dev, void *per_queue_mem,
			       int idx)
{
	struct igb_adapter *adapter = netdev_priv(dev);
	struct igb_rx_queue_mem *mem = per_queue_mem;
	struct igb_ring *ring = adapter->rx_ring[idx];
	struct igb_ring shadow;
	int err;

	if (!ring_uses_hdr_split(ring))
		return -EOPNOTSUPP;
	/* no new binding while SR-IOV reshapes the queues */
	if (test_bit(__IGB_SRIOV_CHANGING, &adapter->state) &&
	    __netif_get_rx_queue(dev, idx)->mp_params.mp_ops)
		return -EBUSY;

	/* Build the new memory on a copy, leaving the live ring alone. */
	shadow = *ring;
	shadow.size = ALIGN(shadow.count * sizeof(union e1000_adv_rx_desc),
			    4096);
	shadow.desc = dma_alloc_coherent(shadow.dev, shadow.size, &shadow.dma,
					 GFP_KERNEL);
	if (!shadow.desc)
		return -ENOMEM;
	err = igb_hds_setup_rx_resources(&shadow);
	if (err) {
		dma_free_coherent(shadow.dev, shadow.size, shadow.desc,
				  shadow.dma);
		return err;
	}
	igb_rx_ring_to_mem(&shadow, mem);
	return 0;
}

static void igb_queue_mem_free(struct net_device *dev, void *per_queue_mem)
{
	struct igb_adapter *adapter = netdev_priv(dev);
	struct igb_rx_queue_mem *mem = per_queue_mem;
	struct igb_ring shadow = *adapter->rx_ring[0];

	if (!mem->desc)
		return;
	igb_rx_mem_to_ring(mem, &shadow);
	shadow.skb = NULL;
	igb_hds_clean_rx_ring(&shadow);
	igb_hds_free_rx_resources(&shadow);
	dma_free_coherent(shadow.dev, shadow.size, shadow.desc, shadow.dma);
	memset(mem, 0, sizeof(*mem));
}

/* Polls of RXDCTL.ENABLE, 100 to 200 us apart, for a queue to stop. */
#define IGB_HDS_STOP_POLLS	100

#ifdef CONFIG_FAULT_INJECTION_DEBUG_FS
/* fail_igb_queue_stop in debugfs: igb_queue_stop() acts as if the queue's
 * RXDCTL.ENABLE never cleared (see fault-injection.rst for the knobs).
 */
static DECLARE_FAULT_ATTR(igb_fail_queue_stop);
static struct dentry *igb_fail_queue_stop_dir;

static bool igb_hds_fail_queue_stop(void)
{
	return should_fail(&igb_fail_queue_stop, 1);
}
#else
static bool igb_hds_fail_queue_stop(void)
{
	return false;
}
#endif

/**
 * igb_hds_fault_init - create the driver's fault injection knobs
 *
 * Called once when the driver loads. With CONFIG_FAULT_INJECTION_DEBUG_FS,
 * /sys/kernel/debug/fail_igb_queue_stop/ makes igb_queue_stop() time out;
 * without it there is nothing to create.
 */
void igb_hds_fault_init(void)
{
#ifdef CONFIG_FAULT_INJECTION_DEBUG_FS
	struct dentry *dir;

	/* the message without a stack dump, unless asked for */
	igb_fail_queue_stop.verbose = 1;
	dir = fault_create_debugfs_attr("fail_igb_queue_stop", NULL,
					&igb_fail_queue_stop);
	igb_fail_queue_stop_dir = IS_ERR(dir) ? NULL : dir;
#endif
}

/**
 * igb_hds_fault_exit - remove what igb_hds_fault_init() created
 *
 * Called once when the driver unloads, after its devices are gone.
 */
void igb_hds_fault_exit(void)
{
#ifdef CONFIG_FAULT_INJECTION_DEBUG_FS
	debugfs_remove_recursive(igb_fail_queue_stop_dir);
	igb_fail_queue_stop_dir = NULL;
#endif
}

/* Unmasks the vector of @q_vector and raises it, as the watchdog does: its
 * NAPI instance polls, receives what came while it was disabled (an
 * interrupt then was lost: NAPI could not be scheduled, and an auto-masked
 * vector stays masked until a poll completes) and refills its RX ring;
 * the poll's completion re-arms the vector as every poll does.
 */
static void igb_hds_kick_vector(struct igb_q_vector *q_vector)
{
	struct igb_adapter *adapter = q_vector->adapter;
	struct e1000_hw *hw = &adapter->hw;

	if (test_bit(__IGB_DOWN, &adapter->state))
		return;
	if (adapter->flags & IGB_FLAG_HAS_MSIX) {
		wr32(E1000_EIMS, q_vector->eims_value);
		wr32(E1000_EICS, q_vector->eims_value);
	} else {
		/* MSI or INTx: one vector for everything, igb_irq_enable()'s */
		wr32(E1000_IMS, IMS_ENABLE_MASK | E1000_IMS_DRSTA);
		wr32(E1000_IAM, IMS_ENABLE_MASK | E1000_IMS_DRSTA);
		wr32(E1000_ICS, E1000_ICS_RXDMT0);
	}
	wrfl();
}

/* Waits for RX queue @reg_idx to stop: RXDCTL.ENABLE reads back clear
 * once the NIC is done with the descriptors and buffers it had taken.
 */
static bool igb_hds_rx_queue_stopped(struct e1000_hw *hw, u8 reg_idx)
{
	int polls;

	for (polls = 0; polls < IGB_HDS_STOP_POLLS; polls++) {
		if (!(rd32(E1000_RXDCTL(reg_idx)) & E1000_RXDCTL_QUEUE_ENABLE))
			return true;
		usleep_range(100, 200);
	}
	return false;
}

/* Stops the queue and hands its memory to the core. If the NIC does not
 * stop it, the NIC may still write into any buffer of the ring: the ring
 * keeps its memory and runs on (RXDCTL as it was, NAPI enabled, the
 * vector re-armed, the frame being received kept), and the core frees
 * nothing of it.
 */
static int igb_queue_stop(struct net_device *dev, void *per_queue_mem,
			  int idx)
{
	struct igb_adapter *adapter = netdev_priv(dev);
	struct igb_ring *ring = adapter->rx_ring[idx];
	struct e1000_hw *hw = &adapter->hw;
	u32 rxdctl;

	napi_disable(&ring->q_vector->napi);
	rxdctl = rd32(E1000_RXDCTL(ring->reg_idx));
	wr32(E1000_RXDCTL(ring->reg_idx), rxdctl & ~E1000_RXDCTL_QUEUE_ENABLE);
	if (!igb_hds_rx_queue_stopped(hw, ring->reg_idx) ||
	    igb_hds_fail_queue_stop()) {
		/* enabled again: should it stop late, it goes on */
		wr32(E1000_RXDCTL(ring->reg_idx), rxdctl);
		napi_enable(&ring->q_vector->napi);
		igb_hds_kick_vector(ring->q_vector);
		if (net_ratelimit())
			netdev_warn(dev, "RX queue %d did not stop, it keeps its memory\n",
				    idx);
		return -ETIMEDOUT;
	}
	if (ring->skb) {
		dev_kfree_skb(ring->skb);
		ring->skb = NULL;
	}
	igb_rx_ring_to_mem(ring, per_queue_mem);
	return 0;
}

/* Starts the queue on new memory. NAPI is enabled before the ring goes
 * live, and the ring is NAPI's from then on: the poll that raising the
 * vector brings posts its buffers (the tail write that makes it live; no
 * frame can come before, so no interrupt is lost) and re-arms the vector.
 * Posting them here instead would race with a poll that an interrupt of
 * the vector or the watchdog brings meanwhile.
 */
static int igb_queue_start(struct net_device *dev, void *per_queue_mem,
			   int idx)
{
	struct igb_adapter *adapter = netdev_priv(dev);
	struct igb_ring *ring = adapter->rx_ring[idx];
	struct igb_rx_queue_mem *mem = per_queue_mem;

	igb_rx_mem_to_ring(mem, ring);
	memset(mem, 0, sizeof(*mem));
	/* buffers still posted on this memory are given back first */
	igb_hds_clean_rx_ring(ring);
	/* enabled, with head and tail at 0: no buffer for the NIC yet */
	igb_configure_rx_ring(adapter, ring);
	napi_enable(&ring->q_vector->napi);
	igb_hds_kick_vector(ring->q_vector);
	return 0;
}

const struct netdev_queue_mgmt_ops igb_queue_mgmt_ops = {
	.ndo_queue_mem_size	= sizeof(struct igb_rx_queue_mem),
	.ndo_queue_mem_alloc	= igb_queue_mem_alloc,
	.ndo_queue_mem_free	= igb_queue_mem_free,
	.ndo_queue_start	= igb_queue_start,
	.ndo_queue_stop		= igb_queue_stop,
};

/**
 * igb_rx_queues_bound - is any RX queue bound to a memory provider?
 * @adapter: the adapter; RTNL held
 *
 * Return: true when some RX queue of the device has a memory provider.
 */
bool igb_rx_queues_bound(struct igb_adapter *adapter)
{
	struct net_device *dev = adapter->netdev;
	unsigned int i;

	ASSERT_RTNL();
	/* a queue the channel count hid would come back unbound */
	for (i = 0; i < dev->num_rx_queues; i++)
		if (__netif_get_rx_queue(dev, i)->mp_params.mp_ops)
			return true;
	return false;
}
