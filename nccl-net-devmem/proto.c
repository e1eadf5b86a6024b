// SPDX-License-Identifier: GPL-2.0
/*
 * Encoding and validation of the plugin's wire formats (see proto.h).
 * Pure functions: no I/O, no state.
 */
#include <string.h>

#include "proto.h"

void dm_put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v;
}

void dm_put32(uint8_t *p, uint32_t v)
{
	dm_put16(p, v >> 16);
	dm_put16(p + 2, v);
}

void dm_put64(uint8_t *p, uint64_t v)
{
	dm_put32(p, v >> 32);
	dm_put32(p + 4, v);
}

uint16_t dm_get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

uint32_t dm_get32(const uint8_t *p)
{
	return (uint32_t)dm_get16(p) << 16 | dm_get16(p + 2);
}

uint64_t dm_get64(const uint8_t *p)
{
	return (uint64_t)dm_get32(p) << 32 | dm_get32(p + 4);
}

void dm_hdr_encode(uint8_t out[DM_HDR_LEN], uint8_t type, uint32_t len, uint32_t seq)
{
	dm_put32(out, DM_WIRE_MAGIC);
	out[4] = DM_WIRE_VERSION;
	out[5] = type;
	dm_put16(out + 6, 0);
	dm_put32(out + 8, len);
	dm_put32(out + 12, seq);
}

const char *dm_hdr_decode(const uint8_t in[DM_HDR_LEN], struct dm_hdr *h)
{
	if (dm_get32(in) != DM_WIRE_MAGIC)
		return "bad magic";
	if (in[4] != DM_WIRE_VERSION)
		return "unsupported protocol version";
	h->type = in[5];
	h->flags = dm_get16(in + 6);
	h->len = dm_get32(in + 8);
	h->seq = dm_get32(in + 12);
	if (h->flags)
		return "unknown header flags";
	switch (h->type) {
	case DM_MSG_HELLO:
		return h->len == DM_HELLO_LEN ? NULL : "HELLO of wrong length";
	case DM_MSG_ACCEPT:
		return h->len == DM_ACCEPT_LEN ? NULL : "ACCEPT of wrong length";
	case DM_MSG_REJECT:
		return h->len == DM_REJECT_LEN ? NULL : "REJECT of wrong length";
	case DM_MSG_SEND:
		if (h->len < DM_SEND_LEN || h->len > DM_SEND_LEN + DM_INLINE_MAX)
			return "SEND of wrong length";
		return NULL;
	case DM_MSG_CLOSE:
		return h->len == 0 ? NULL : "CLOSE of wrong length";
	default:
		return "unknown message type";
	}
}

void dm_hello_encode(uint8_t out[DM_HELLO_LEN], const struct dm_hello *h)
{
	dm_put64(out, h->nonce);
	dm_put64(out + 8, h->conn_id);
	dm_put16(out + 16, h->index);
	dm_put16(out + 18, h->nsocks);
	dm_put32(out + 20, h->flags);
}

void dm_hello_decode(const uint8_t in[DM_HELLO_LEN], struct dm_hello *h)
{
	h->nonce = dm_get64(in);
	h->conn_id = dm_get64(in + 8);
	h->index = dm_get16(in + 16);
	h->nsocks = dm_get16(in + 18);
	h->flags = dm_get32(in + 20);
}

void dm_send_encode(uint8_t out[DM_SEND_LEN], const struct dm_send_desc *d)
{
	dm_put64(out, d->size);
	dm_put32(out + 8, d->tag);
	dm_put32(out + 12, d->flags);
}

void dm_send_decode(const uint8_t in[DM_SEND_LEN], struct dm_send_desc *d)
{
	d->size = dm_get64(in);
	d->tag = dm_get32(in + 8);
	d->flags = dm_get32(in + 12);
}

void dm_plan(uint64_t size, unsigned nsocks, uint64_t *chunk, unsigned *nchunks)
{
	uint64_t n, c;

	if (size <= DM_INLINE_MAX || nsocks == 0) {
		*chunk = 0;
		*nchunks = 0;
		return;
	}
	n = (size + DM_MIN_CHUNK - 1) / DM_MIN_CHUNK;
	if (n > nsocks)
		n = nsocks;
	c = (size + n - 1) / n;
	c = (c + DM_CHUNK_ALIGN - 1) / DM_CHUNK_ALIGN * DM_CHUNK_ALIGN;
	*chunk = c;
	*nchunks = (unsigned)((size + c - 1) / c);
}

uint32_t dm_fnv1a(const uint8_t *p, size_t n)
{
	uint32_t h = 2166136261u;

	while (n--) {
		h ^= *p++;
		h *= 16777619u;
	}
	return h;
}

void dm_handle_encode(uint8_t out[DM_HANDLE_SIZE], const struct dm_handle *h)
{
	memset(out, 0, DM_HANDLE_SIZE);
	dm_put32(out, DM_HANDLE_MAGIC);
	dm_put16(out + 4, DM_HANDLE_VERSION);
	dm_put16(out + 6, (uint16_t)h->family);
	dm_put16(out + 8, h->port);
	dm_put16(out + 10, h->dev);
	dm_put32(out + 12, h->scope_id);
	memcpy(out + 16, h->addr, 16);
	dm_put64(out + 32, h->nonce);
	dm_put32(out + 40, dm_fnv1a(out, 40));
}

const char *dm_handle_decode(const uint8_t in[DM_HANDLE_SIZE], struct dm_handle *h)
{
	size_t i;

	if (dm_get32(in) != DM_HANDLE_MAGIC)
		return "bad handle magic";
	if (dm_get16(in + 4) != DM_HANDLE_VERSION)
		return "unsupported handle version";
	if (dm_get32(in + 40) != dm_fnv1a(in, 40))
		return "handle checksum mismatch";
	for (i = 44; i < DM_HANDLE_STATE_OFF; i++)
		if (in[i])
			return "handle padding not zero";
	for (i = DM_HANDLE_STATE_OFF + 16; i < DM_HANDLE_SIZE; i++)
		if (in[i])
			return "handle padding not zero";
	h->family = dm_get16(in + 6);
	h->port = dm_get16(in + 8);
	h->dev = dm_get16(in + 10);
	h->scope_id = dm_get32(in + 12);
	memcpy(h->addr, in + 16, 16);
	h->nonce = dm_get64(in + 32);
	if (h->family != 4 && h->family != 6)
		return "bad address family in handle";
	if (h->port == 0)
		return "port 0 in handle";
	if (h->family == 4)
		for (i = 4; i < 16; i++)
			if (h->addr[i])
				return "IPv4 handle with stray address bytes";
	return NULL;
}
