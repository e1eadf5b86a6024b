// SPDX-License-Identifier: GPL-2.0
/*
 * devmem_bench - what device memory TCP saves, and what it costs (make bench).
 *
 *   devmem_bench rx MODE -s ADDR [options]     receiver (server)
 *   devmem_bench tx MODE -s ADDR [options]     sender (client)
 *   devmem_bench bind -f IFNAME -B SIZE [-q QUEUE] [-r REPS]
 *
 * Receiver modes:
 *   plain   recv() into a host buffer, nothing else (the link's ceiling)
 *   bounce  recv() into a host buffer, then memcpy() into an mmapped
 *           udmabuf: what an application without devmem does
 *   devmem  a udmabuf bound to RX queue -q of -f IFNAME, recvmsg() with
 *           MSG_SOCK_DEVMEM; tokens go back with SO_DEVMEM_DONTNEED in
 *           calls of -t tokens (default 128) as they come, or with -H all
 *           at the end, once the stream is over (the dma-buf must hold
 *           them all): the cost of the calls alone, without the softirq
 *           work that local_bh_enable() runs inside them during a stream
 *
 * Sender modes:
 *   plain     send() from a host buffer
 *   copy      send() from an mmapped udmabuf
 *   zerocopy  send(MSG_ZEROCOPY) from an mmapped udmabuf
 *   devmem    sendmsg(MSG_ZEROCOPY) with SCM_DEVMEM_DMABUF from a udmabuf
 *             bound for TX to -f IFNAME (iov_base is an offset in it)
 *
 * The receiver accepts -n connections, the sender opens them.  Once all are
 * up the receiver takes its first sample and sends one byte on each; the
 * sender takes its sample when it has them all, and streams -b bytes in
 * total (split evenly across the flows).  A side's measurement ends when
 * every flow is over: for the receiver at the last EOF, for the sender when
 * the receiver closed the last connection (the sender sets TCP_NODELAY: a
 * window-limited sender meeting the receiver's delayed ACKs would otherwise
 * stall on a timer).  Both pin themselves to -c CPU
 * and account that CPU: the deltas of its line in /proc/stat, i.e. user
 * (user + nice) and kernel (system + irq + softirq) time from the guest's
 * own tick accounting, whatever ran there (the process, its softirqs and
 * interrupts, anything else).
 *
 * With -M ID the process also marks the beginning and the end of its
 * measurement for a QEMU TCG plugin that counts instructions per vCPU
 * (vm/insn-count.c): it calls into a page of "ret" instructions mapped at
 * MARKER_BASE, at offset 2 * ID (begin) and 2 * ID + 1 (end).  Without the
 * plugin these are two calls that return.
 *
 * bind: binds a udmabuf of -B bytes to RX queue -q of -f IFNAME (header
 * split must be on) -r times, and reports the time bind-rx and the unbind
 * took and how much kernel memory the binding held (Slab + VmallocUsed of
 * /proc/meminfo, and MemFree, before and after), per bound page.
 *
 * Everything printed on stdout is one "key: value" per line; messages go to
 * stderr.  Exit status 0 on success, 1 on failure, 2 on bad usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/errqueue.h>
#include <linux/sockios.h>

#include "devmem_lib.h"

#define DEFAULT_PORT		5601
#define DEFAULT_BYTES		(64ULL << 20)
#define DEFAULT_CHUNK		(64U << 10)
#define DEFAULT_DMABUF		(64ULL << 20)
#define DEFAULT_BATCH		128
#define MAX_FLOWS		256
#define MAX_CHUNK		(16U << 20)

/* SO_DEVMEM_DONTNEED limits of one call */
#define DONTNEED_MAX_RANGES	128
#define DONTNEED_MAX_TOKENS	1024

/* devmem recvmsg: room for this many cmsgs per call */
#define RX_MAX_CMSGS		4096

/* recv() calls on one flow before looking at the others */
#define RX_FAIRNESS		16

/* MSG_ZEROCOPY: sendmsg calls remembered for the completions */
#define ZC_RING			65536
#define ZC_CTRL_LEN		256

/* the page of "ret" the instruction counting plugin watches */
#define MARKER_BASE		0x7e5700000000UL
#define MARKER_SIZE		(64UL << 10)

#define CONNECT_RETRY_SEC	30

/* how often a sender that sent everything checks that it was all ACKed */
#define DRAIN_POLL_MS		1

enum rx_mode { RX_PLAIN, RX_BOUNCE, RX_DEVMEM };
enum tx_mode { TX_PLAIN, TX_COPY, TX_ZEROCOPY, TX_DEVMEM };

static const char *const rx_modes[] = { "plain", "bounce", "devmem", NULL };
static const char *const tx_modes[] = {
	"plain", "copy", "zerocopy", "devmem", NULL
};

struct opts {
	int mode;
	struct sockaddr_storage addr;	/* -s, with -p */
	unsigned int port;		/* -p */
	unsigned int flows;		/* -n */
	unsigned long long bytes;	/* -b, all flows together */
	unsigned int chunk;		/* -z */
	unsigned long long buf_size;	/* -B */
	const char *ifname;		/* -f */
	int queue;			/* -q */
	int cpu;			/* -c, -1: no pinning */
	unsigned int batch;		/* -t */
	long marker;			/* -M, -1: none */
	unsigned int reps;		/* -r */
	bool hold;			/* -H */
};

/* ---- small helpers ----------------------------------------------------- */

static void die_usage(void)
{
	fprintf(stderr,
		"usage: devmem_bench rx plain|bounce|devmem -s ADDR [-p PORT] [-n FLOWS]\n"
		"                    [-c CPU] [-z BYTES] [-B BYTES] [-f IFNAME -q QUEUE]\n"
		"                    [-t TOKENS] [-H] [-M ID]\n"
		"       devmem_bench tx plain|copy|zerocopy|devmem -s ADDR [-p PORT]\n"
		"                    [-n FLOWS] [-b BYTES] [-c CPU] [-z BYTES] [-B BYTES]\n"
		"                    [-f IFNAME] [-M ID]\n"
		"       devmem_bench bind -f IFNAME -B BYTES [-q QUEUE] [-r REPS]\n"
		"\n"
		"  -s ADDR    server address (the receiver listens on it)\n"
		"  -p PORT    server port (default %d)\n"
		"  -n FLOWS   concurrent connections, 1..%d (default 1)\n"
		"  -b BYTES   sender: bytes to send over all flows (default 64M)\n"
		"  -c CPU     pin to CPU and account it (default: no pinning, CPU 0)\n"
		"  -z BYTES   bytes per recv()/recvmsg()/send() (default 64K)\n"
		"  -B BYTES   udmabuf size (default 64M)\n"
		"  -f IFNAME  devmem: NIC to bind (rx, bind) or to send from (tx)\n"
		"  -q QUEUE   devmem rx, bind: RX queue to bind (default 1)\n"
		"  -t TOKENS  devmem rx: tokens per SO_DEVMEM_DONTNEED call (default %d)\n"
		"  -H         devmem rx: hold every token until the end, give them\n"
		"             back after the measurement, with no traffic\n"
		"  -M ID      mark the measurement for the instruction counter\n"
		"  -r REPS    bind: bind/unbind cycles (default 1)\n"
		"BYTES take a K, M or G suffix.\n",
		DEFAULT_PORT, MAX_FLOWS, DEFAULT_BATCH);
	exit(2);
}

static void fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "devmem_bench: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(1);
}

static long parse_long(const char *s, long min, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		die_usage();
	return v;
}

static int lookup_mode(const char *const *names, const char *s)
{
	int i;

	for (i = 0; names[i]; i++)
		if (!strcmp(names[i], s))
			return i;
	return -1;
}

static void parse_opts(int argc, char **argv, struct opts *o)
{
	unsigned long long v;
	int c;

	memset(o, 0, sizeof(*o));
	o->port = DEFAULT_PORT;
	o->flows = 1;
	o->bytes = DEFAULT_BYTES;
	o->chunk = DEFAULT_CHUNK;
	o->buf_size = DEFAULT_DMABUF;
	o->queue = 1;
	o->cpu = -1;
	o->batch = DEFAULT_BATCH;
	o->marker = -1;
	o->reps = 1;

	while ((c = getopt(argc, argv, "s:p:n:b:c:z:B:f:q:t:M:r:H")) != -1) {
		switch (c) {
		case 's':
			if (devmem_parse_addr(optarg, &o->addr) < 0)
				die_usage();
			break;
		case 'p':
			o->port = parse_long(optarg, 1, 65535);
			break;
		case 'n':
			o->flows = parse_long(optarg, 1, MAX_FLOWS);
			break;
		case 'b':
			if (devmem_parse_size(optarg, &o->bytes) || !o->bytes)
				die_usage();
			break;
		case 'c':
			o->cpu = parse_long(optarg, 0, CPU_SETSIZE - 1);
			break;
		case 'z':
			if (devmem_parse_size(optarg, &v) || !v || v > MAX_CHUNK)
				die_usage();
			o->chunk = v;
			break;
		case 'B':
			if (devmem_parse_size(optarg, &o->buf_size) ||
			    !o->buf_size || o->buf_size % getpagesize() ||
			    o->buf_size > SIZE_MAX)
				die_usage();
			break;
		case 'f':
			o->ifname = optarg;
			break;
		case 'q':
			o->queue = parse_long(optarg, 0, 4095);
			break;
		case 't':
			o->batch = parse_long(optarg, 1, DONTNEED_MAX_TOKENS);
			break;
		case 'M':
			o->marker = parse_long(optarg, 0,
					       MARKER_SIZE / 2 - 1);
			break;
		case 'r':
			o->reps = parse_long(optarg, 1, 100000);
			break;
		case 'H':
			o->hold = true;
			break;
		default:
			die_usage();
		}
	}
	if (optind != argc)
		die_usage();
	devmem_set_port(&o->addr, o->port);
}

static void pin_cpu(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		fail("pinning to CPU %d: %s", cpu, strerror(errno));
}

/* ---- accounting: /proc/stat, markers ----------------------------------- */

/* Fields of a "cpuN" line of /proc/stat, in USER_HZ ticks. */
enum {
	ST_USER, ST_NICE, ST_SYSTEM, ST_IDLE, ST_IOWAIT, ST_IRQ, ST_SOFTIRQ,
	ST_STEAL, ST_NR
};

/* TCP counters of the network namespace: Tcp: of /proc/net/snmp, TcpExt: */
static const char *const tcp_keys[] = {
	"InSegs", "OutSegs", "RetransSegs", "TCPTimeouts", "TCPLossProbes",
	"TCPFastRetrans", "TCPSpuriousRTOs", "PruneCalled", "RcvPruned",
	"TCPRcvCollapsed", "TCPRcvQDrop", "TCPBacklogDrop", "TCPOFOQueue",
	"DelayedACKs", "TCPDSACKRecv", "TCPZeroWindowDrop", "TCPToZeroWindowAdv",
	NULL
};

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define TCP_NKEYS	(ARRAY_SIZE(tcp_keys) - 1)

struct sample {
	unsigned long long ns;
	unsigned long long tick[ST_NR];
	unsigned long long tcp[TCP_NKEYS];
};

static void read_cpu_stat(int cpu, unsigned long long *tick)
{
	char line[512], name[16];
	FILE *f;

	snprintf(name, sizeof(name), "cpu%d ", cpu < 0 ? 0 : cpu);
	f = fopen("/proc/stat", "r");
	if (!f)
		fail("/proc/stat: %s", strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, name, strlen(name)))
			continue;
		memset(tick, 0, ST_NR * sizeof(*tick));
		if (sscanf(line + strlen(name),
			   "%llu %llu %llu %llu %llu %llu %llu %llu",
			   &tick[0], &tick[1], &tick[2], &tick[3], &tick[4],
			   &tick[5], &tick[6], &tick[7]) < ST_SOFTIRQ + 1)
			break;
		fclose(f);
		return;
	}
	fclose(f);
	fail("no usable %sline in /proc/stat", name);
}

static void take_sample(int cpu, struct sample *s)
{
	memset(s->tcp, 0, sizeof(s->tcp));
	devmem_read_counters("/proc/net/snmp", "Tcp: ", tcp_keys, s->tcp);
	devmem_read_counters("/proc/net/netstat", "TcpExt: ", tcp_keys,
			     s->tcp);
	read_cpu_stat(cpu, s->tick);
	s->ns = devmem_now_ns();
}

static unsigned char *markers;

/* Map the page(s) of "ret" the instruction counting plugin watches. */
static void marker_setup(long id)
{
	void *p;

	if (id < 0)
		return;
	p = mmap((void *)MARKER_BASE, MARKER_SIZE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (p == MAP_FAILED || p != (void *)MARKER_BASE)
		fail("mapping the markers: %s", strerror(errno));
	memset(p, 0xc3, MARKER_SIZE);	/* ret */
	if (mprotect(p, MARKER_SIZE, PROT_READ | PROT_EXEC))
		fail("mprotect markers: %s", strerror(errno));
	markers = p;
}

static void marker(long id, int end)
{
	void (*fn)(void);

	if (!markers || id < 0)
		return;
	fn = (void (*)(void))(uintptr_t)(markers + 2 * id + end);
	fn();
	/* keep the call where it is */
	__asm__ __volatile__("" ::: "memory");
}

/* rx and tx: -s is required; pin to -c and map the markers of -M. */
static void side_start(const struct opts *o)
{
	if (!o->addr.ss_family)
		die_usage();
	pin_cpu(o->cpu);
	marker_setup(o->marker);
}

/* The ifindex of -f IFNAME. */
static int bench_ifindex(const struct opts *o)
{
	int ifindex = devmem_ifindex(o->ifname);

	if (ifindex < 0)
		fail("%s: %s", o->ifname, strerror(-ifindex));
	return ifindex;
}

/* A "netdev" netlink socket in @nl. */
static void bench_nl_open(struct nl_ctx *nl)
{
	int err = devmem_nl_open(nl);

	if (err)
		fail("netdev netlink: %s", strerror(-err));
}

/* A udmabuf of -B bytes, mapped at *@map: its fd. */
static int bench_udmabuf(const struct opts *o, unsigned char **map)
{
	int fd, err;

	fd = udmabuf_create(o->buf_size, NULL);
	if (fd < 0)
		fail("udmabuf of %llu bytes: %s", o->buf_size, strerror(-fd));
	err = udmabuf_map(fd, o->buf_size, (void **)map);
	if (err)
		fail("mmap udmabuf: %s", strerror(-err));
	return fd;
}

/* The first lines of an rx or tx output: what ran, how much, how fast. */
static void print_transfer(const struct opts *o, const char *role,
			   const char *mode, unsigned long long bytes,
			   unsigned long long copied, const struct sample *a,
			   const struct sample *b)
{
	printf("role: %s\n", role);
	printf("mode: %s\n", mode);
	printf("flows: %u\n", o->flows);
	printf("chunk: %u\n", o->chunk);
	printf("bytes: %llu\n", bytes);
	printf("throughput_mbps: %.2f\n",
	       devmem_mbps(bytes, (b->ns - a->ns) / 1e9));
	printf("bytes_copied: %llu\n", copied);
	printf("copy_per_byte: %.4f\n", bytes ? (double)copied / bytes : 0);
}

/* The accounting part of every measurement's output. */
static void print_sample_delta(const struct opts *o, const struct sample *a,
			       const struct sample *b)
{
	unsigned long long d[ST_NR];
	double hz = sysconf(_SC_CLK_TCK);
	int i;

	for (i = 0; i < ST_NR; i++)
		d[i] = b->tick[i] - a->tick[i];
	printf("cpu: %d\n", o->cpu < 0 ? 0 : o->cpu);
	printf("clk_tck: %.0f\n", hz);
	printf("seconds: %.6f\n", (b->ns - a->ns) / 1e9);
	printf("cpu_user_s: %.3f\n", (d[ST_USER] + d[ST_NICE]) / hz);
	printf("cpu_system_s: %.3f\n", d[ST_SYSTEM] / hz);
	printf("cpu_irq_s: %.3f\n", d[ST_IRQ] / hz);
	printf("cpu_softirq_s: %.3f\n", d[ST_SOFTIRQ] / hz);
	printf("cpu_kernel_s: %.3f\n",
	       (d[ST_SYSTEM] + d[ST_IRQ] + d[ST_SOFTIRQ] + d[ST_STEAL]) / hz);
	printf("cpu_idle_s: %.3f\n", (d[ST_IDLE] + d[ST_IOWAIT]) / hz);
	for (i = 0; tcp_keys[i]; i++)
		printf("tcp_%s: %llu\n", tcp_keys[i], b->tcp[i] - a->tcp[i]);
	if (o->marker >= 0) {
		printf("marker_begin: %ld\n", 2 * o->marker);
		printf("marker_end: %ld\n", 2 * o->marker + 1);
	}
}

/* ---- connections ------------------------------------------------------- */

static void set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK))
		fail("O_NONBLOCK: %s", strerror(errno));
}

static void epoll_set(int ep, int op, int fd, unsigned int events,
		      unsigned int idx)
{
	struct epoll_event ev = { .events = events, .data.u32 = idx };

	if (epoll_ctl(ep, op, fd, &ev))
		fail("epoll_ctl: %s", strerror(errno));
}

/* Listen on -s:-p and accept -n connections, blocking. */
static void accept_flows(const struct opts *o, int *fds)
{
	int lfd, one = 1;
	unsigned int i;

	lfd = socket(o->addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0)
		fail("socket: %s", strerror(errno));
	if (setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(lfd, (struct sockaddr *)&o->addr,
		 devmem_addr_len(&o->addr)) ||
	    listen(lfd, MAX_FLOWS))
		fail("listen: %s", strerror(errno));
	printf("listening: 1\n");
	fflush(stdout);
	for (i = 0; i < o->flows; i++) {
		fds[i] = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fds[i] < 0)
			fail("accept: %s", strerror(errno));
	}
	close(lfd);
}

static int connect_one(const struct opts *o)
{
	unsigned long long deadline;
	int fd;

	deadline = devmem_now_ns() + CONNECT_RETRY_SEC * 1000000000ULL;
	for (;;) {
		fd = socket(o->addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			fail("socket: %s", strerror(errno));
		if (!connect(fd, (struct sockaddr *)&o->addr,
			     devmem_addr_len(&o->addr)))
			return fd;
		if ((errno != ECONNREFUSED && errno != ENETUNREACH) ||
		    devmem_now_ns() > deadline)
			fail("connect: %s", strerror(errno));
		close(fd);
		usleep(50000);
	}
}

/* ---- receiver ---------------------------------------------------------- */

struct rx_flow {
	int fd;
	bool eof;
	unsigned long long bytes;
	/* devmem: tokens not given back yet, tokens[head..head + ntokens) */
	__u32 *tokens;
	size_t head;
	size_t ntokens;
	size_t cap;
};

struct rx_state {
	const struct opts *o;
	struct rx_flow *flows;
	unsigned char *buf;		/* -z bytes: recv() / linear part */
	unsigned char *map;		/* the udmabuf, bounce and devmem */
	int dmabuf_fd;
	unsigned long long map_off;	/* bounce: where the next copy goes */
	struct nl_ctx nl;
	bool bound;
	__u32 binding_id;
	void *ctrl;
	size_t ctrl_len;
	/* results */
	unsigned long long bytes;
	unsigned long long bytes_copied;	/* by the CPU, as it can tell */
	unsigned long long bytes_dmabuf;
	unsigned long long bytes_linear;
	unsigned long long bytes_readable;	/* devmem: without cmsgs */
	unsigned long long recv_calls;
	unsigned long long frags;
	unsigned long long tokens_freed;
	unsigned long long dontneed_calls;
	unsigned long long dontneed_ns;
	unsigned long long eagain;
	/* ns per token of each full (-t tokens) SO_DEVMEM_DONTNEED call */
	double *call_ns_per_token;
	unsigned long long full_calls;
	unsigned long long full_calls_max;
};

static void rx_bind(struct rx_state *s)
{
	const struct opts *o = s->o;
	char extack[NL_EXTACK_LEN] = "";
	unsigned int q = o->queue;
	int ifindex, err;

	if (!o->ifname)
		fail("devmem rx needs -f IFNAME");
	ifindex = bench_ifindex(o);
	bench_nl_open(&s->nl);
	err = devmem_bind_rx(&s->nl, ifindex, s->dmabuf_fd, &q, 1,
			     &s->binding_id, extack, sizeof(extack));
	if (err)
		fail("bind-rx %s queue %u: %s%s%s", o->ifname, q,
		     strerror(-err), *extack ? ": " : "", extack);
	s->bound = true;
	fprintf(stderr, "devmem_bench: bound %s RX queue %u, binding %u\n",
		o->ifname, q, s->binding_id);
}

static void rx_setup(struct rx_state *s)
{
	const struct opts *o = s->o;
	unsigned int i;

	s->flows = calloc(o->flows, sizeof(*s->flows));
	s->buf = malloc(o->chunk);
	if (!s->flows || !s->buf)
		fail("out of memory");
	memset(s->buf, 0, o->chunk);
	s->dmabuf_fd = -1;
	if (o->mode == RX_PLAIN)
		return;

	s->dmabuf_fd = bench_udmabuf(o, &s->map);
	if (o->mode == RX_BOUNCE) {
		/* fault it in now, not while measuring */
		memset(s->map, 0, o->buf_size);
		return;
	}
	for (i = 0; i < o->flows; i++) {
		s->flows[i].cap = o->batch + RX_MAX_CMSGS;
		s->flows[i].tokens = calloc(s->flows[i].cap, sizeof(__u32));
		if (!s->flows[i].tokens)
			fail("out of memory");
	}
	s->ctrl_len = CMSG_SPACE(sizeof(struct dmabuf_cmsg)) * RX_MAX_CMSGS;
	s->ctrl = malloc(s->ctrl_len);
	if (!s->ctrl)
		fail("out of memory");
	rx_bind(s);
}

/* One SO_DEVMEM_DONTNEED call for the first @n pending tokens of @f. */
static void rx_dontneed(struct rx_state *s, struct rx_flow *f, unsigned int n)
{
	struct dmabuf_token r[DONTNEED_MAX_RANGES];
	unsigned long long t0, t1;
	size_t used;
	int nr, ret;

	/* consecutive tokens merge into one range; stop at the range limit */
	nr = devmem_tokens_pack(f->tokens + f->head, n, r, DONTNEED_MAX_RANGES,
				DONTNEED_MAX_TOKENS, &used);
	t0 = devmem_now_ns();
	ret = setsockopt(f->fd, SOL_SOCKET, SO_DEVMEM_DONTNEED, r,
			 nr * sizeof(r[0]));
	t1 = devmem_now_ns();
	if (ret < 0)
		fail("SO_DEVMEM_DONTNEED: %s", strerror(errno));
	if ((size_t)ret != used)
		fail("SO_DEVMEM_DONTNEED freed %d of %zu tokens", ret, used);
	s->dontneed_calls++;
	s->dontneed_ns += t1 - t0;
	if (used == s->o->batch) {
		if (s->full_calls == s->full_calls_max) {
			s->full_calls_max = s->full_calls_max * 2 + 1024;
			s->call_ns_per_token =
				realloc(s->call_ns_per_token,
					s->full_calls_max * sizeof(double));
			if (!s->call_ns_per_token)
				fail("out of memory");
		}
		s->call_ns_per_token[s->full_calls++] =
			(double)(t1 - t0) / used;
	}
	s->tokens_freed += used;
	f->ntokens -= used;
	f->head = f->ntokens ? f->head + used : 0;
}

/* Give back tokens in calls of -t; with @all, the remainder too. */
static void rx_tokens_release(struct rx_state *s, struct rx_flow *f, bool all)
{
	while (f->ntokens >= s->o->batch)
		rx_dontneed(s, f, s->o->batch);
	while (all && f->ntokens)
		rx_dontneed(s, f, f->ntokens < s->o->batch ? f->ntokens :
				  s->o->batch);
}

/* Keep a token for later; the array is compacted or grown when full. */
static void rx_token_add(struct rx_flow *f, __u32 token)
{
	if (f->head + f->ntokens == f->cap) {
		if (f->head) {
			memmove(f->tokens, f->tokens + f->head,
				f->ntokens * sizeof(__u32));
			f->head = 0;
		} else {
			f->cap *= 2;
			f->tokens = realloc(f->tokens, f->cap * sizeof(__u32));
			if (!f->tokens)
				fail("out of memory");
		}
	}
	f->tokens[f->head + f->ntokens++] = token;
}

/* The cmsgs of one devmem recvmsg: count them, keep the tokens. */
static void rx_walk_cmsgs(struct rx_state *s, struct rx_flow *f,
			  struct msghdr *msg, ssize_t len)
{
	unsigned long long covered = 0;
	struct dmabuf_cmsg dc;
	struct cmsghdr *cm;

	for (cm = CMSG_FIRSTHDR(msg); cm; cm = CMSG_NXTHDR(msg, cm)) {
		if (devmem_cmsg_get(cm, &dc))
			fail("unexpected cmsg level %d type %d",
			     cm->cmsg_level, cm->cmsg_type);
		covered += dc.frag_size;
		if (cm->cmsg_type == SCM_DEVMEM_LINEAR) {
			s->bytes_linear += dc.frag_size;
			continue;
		}
		if (dc.dmabuf_id != s->binding_id ||
		    dc.frag_offset + dc.frag_size > s->o->buf_size)
			fail("fragment %llu+%u of binding %u is not ours",
			     (unsigned long long)dc.frag_offset, dc.frag_size,
			     dc.dmabuf_id);
		s->bytes_dmabuf += dc.frag_size;
		s->frags++;
		rx_token_add(f, dc.frag_token);
	}
	if (covered != (unsigned long long)len)
		fail("recvmsg returned %zd bytes, cmsgs cover %llu", len,
		     covered);
}

/* One receive call on @f: bytes, 0 at EOF, -1 when it would block. */
static ssize_t rx_one(struct rx_state *s, struct rx_flow *f)
{
	const struct opts *o = s->o;
	struct iovec iov = { .iov_base = s->buf, .iov_len = o->chunk };
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = s->ctrl,
		.msg_controllen = s->ctrl_len,
	};
	ssize_t n;

	if (o->mode == RX_DEVMEM)
		n = recvmsg(f->fd, &msg, MSG_SOCK_DEVMEM | MSG_DONTWAIT);
	else
		n = recv(f->fd, s->buf, o->chunk, MSG_DONTWAIT);
	s->recv_calls++;
	if (n < 0) {
		if (errno == EAGAIN || errno == EINTR) {
			s->eagain++;
			return -1;
		}
		fail("recv: %s%s", strerror(errno),
		     errno == EFAULT ? " (device memory without devmem?)" : "");
	}
	if (!n)
		return 0;
	f->bytes += n;
	s->bytes += n;
	switch (o->mode) {
	case RX_PLAIN:
		s->bytes_copied += n;
		break;
	case RX_BOUNCE:
		if (s->map_off + n > o->buf_size)
			s->map_off = 0;
		memcpy(s->map + s->map_off, s->buf, n);
		s->map_off += n;
		s->bytes_copied += 2 * n;
		break;
	case RX_DEVMEM:
		if (msg.msg_flags & MSG_CTRUNC)
			fail("recvmsg: control data truncated");
		if (!CMSG_FIRSTHDR(&msg)) {
			/* the kernel had it in host memory and copied it */
			s->bytes_readable += n;
			s->bytes_linear += n;
		} else {
			rx_walk_cmsgs(s, f, &msg, n);
		}
		s->bytes_copied = s->bytes_linear;
		if (!o->hold)
			rx_tokens_release(s, f, false);
		break;
	}
	return n;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Median of @n values (sorts them); 0 for none. */
static double median_d(double *v, unsigned long long n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_d);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void rx_print(const struct rx_state *s, const struct sample *a,
		     const struct sample *b)
{
	const struct opts *o = s->o;

	print_transfer(o, "rx", rx_modes[o->mode], s->bytes, s->bytes_copied,
		       a, b);
	printf("recv_calls: %llu\n", s->recv_calls);
	printf("recv_eagain: %llu\n", s->eagain);
	if (o->mode == RX_DEVMEM) {
		printf("bytes_dmabuf: %llu\n", s->bytes_dmabuf);
		printf("bytes_linear: %llu\n", s->bytes_linear);
		printf("bytes_readable: %llu\n", s->bytes_readable);
		printf("frags: %llu\n", s->frags);
		printf("tokens_freed: %llu\n", s->tokens_freed);
		printf("dontneed_calls: %llu\n", s->dontneed_calls);
		printf("dontneed_ns: %llu\n", s->dontneed_ns);
		printf("token_batch: %u\n", o->batch);
		printf("token_hold: %d\n", o->hold);
		printf("tokens_per_call: %.2f\n", s->dontneed_calls ?
		       (double)s->tokens_freed / s->dontneed_calls : 0);
		printf("ns_per_token: %.2f\n", s->tokens_freed ?
		       (double)s->dontneed_ns / s->tokens_freed : 0);
		printf("full_calls: %llu\n", s->full_calls);
		printf("ns_per_token_median: %.2f\n",
		       median_d(s->call_ns_per_token, s->full_calls));
		printf("dmabuf_size: %llu\n", o->buf_size);
	}
	print_sample_delta(o, a, b);
}

static int rx_main(const struct opts *o)
{
	struct epoll_event evs[MAX_FLOWS];
	struct sample a, b;
	struct rx_state s;
	unsigned int i, open;
	int *fds, ep, n, k, j;

	memset(&s, 0, sizeof(s));
	s.o = o;
	side_start(o);
	rx_setup(&s);

	fds = calloc(o->flows, sizeof(*fds));
	if (!fds)
		fail("out of memory");
	accept_flows(o, fds);
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0)
		fail("epoll: %s", strerror(errno));
	for (i = 0; i < o->flows; i++) {
		s.flows[i].fd = fds[i];
		set_nonblock(fds[i]);
		epoll_set(ep, EPOLL_CTL_ADD, fds[i], EPOLLIN, i);
	}

	take_sample(o->cpu, &a);
	marker(o->marker, 0);
	for (i = 0; i < o->flows; i++)
		if (send(fds[i], "g", 1, MSG_NOSIGNAL) != 1)
			fail("go: %s", strerror(errno));

	open = o->flows;
	while (open) {
		n = epoll_wait(ep, evs, MAX_FLOWS, -1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			fail("epoll_wait: %s", strerror(errno));
		}
		for (k = 0; k < n; k++) {
			struct rx_flow *f = &s.flows[evs[k].data.u32];
			ssize_t got = 1;

			for (j = 0; j < RX_FAIRNESS && got > 0; j++)
				got = rx_one(&s, f);
			if (got)
				continue;
			f->eof = true;
			open--;
			epoll_set(ep, EPOLL_CTL_DEL, f->fd, 0, 0);
			if (o->mode == RX_DEVMEM && !o->hold)
				rx_tokens_release(&s, f, true);
		}
	}
	marker(o->marker, 1);
	take_sample(o->cpu, &b);

	/* -H: every token goes back now, with no traffic around */
	if (o->mode == RX_DEVMEM && o->hold)
		for (i = 0; i < o->flows; i++)
			rx_tokens_release(&s, &s.flows[i], true);
	for (i = 0; i < o->flows; i++)
		close(fds[i]);
	if (s.bound)
		nl_close(&s.nl);
	if (s.bytes_readable)
		fprintf(stderr, "devmem_bench: %llu of %llu bytes in host memory\n",
			s.bytes_readable, s.bytes);
	if (o->mode == RX_DEVMEM && s.tokens_freed != s.frags)
		fail("%llu tokens freed for %llu fragments", s.tokens_freed,
		     s.frags);
	rx_print(&s, &a, &b);
	return 0;
}

/* ---- sender ------------------------------------------------------------ */

struct tx_flow {
	int fd;
	unsigned long long left;	/* bytes still to send */
	unsigned long long off;		/* next offset in the source buffer */
	bool draining;			/* sent all, waiting for the ACKs */
	bool shut;			/* SHUT_WR done */
	bool done;			/* the receiver closed */
	bool wait_zc;			/* ENOBUFS: waiting for completions */
	/* MSG_ZEROCOPY: calls made, completed, and each call's length */
	unsigned int calls;
	unsigned int completed;
	unsigned int *len;
};

struct tx_state {
	const struct opts *o;
	struct tx_flow *flows;
	unsigned char *src;		/* host buffer or mmapped udmabuf */
	unsigned long long src_size;
	int dmabuf_fd;
	struct nl_ctx nl;
	bool bound;
	__u32 binding_id;
	int ep;
	/* results */
	unsigned long long bytes;
	unsigned long long bytes_copied;	/* by the CPU, as it can tell */
	unsigned long long send_calls;
	unsigned long long zc_completions;	/* calls reported complete */
	unsigned long long zc_copied;		/* of those, copied */
	unsigned long long zc_copied_bytes;
	unsigned long long enobufs;
};

static void tx_setup(struct tx_state *s)
{
	const struct opts *o = s->o;
	char extack[NL_EXTACK_LEN] = "";
	unsigned int i;
	int err, ifindex;

	s->flows = calloc(o->flows, sizeof(*s->flows));
	if (!s->flows)
		fail("out of memory");
	s->dmabuf_fd = -1;
	if (o->mode == TX_PLAIN) {
		s->src_size = o->chunk;
		s->src = malloc(s->src_size);
		if (!s->src)
			fail("out of memory");
		memset(s->src, 0x5a, s->src_size);
		return;
	}
	s->src_size = o->buf_size;
	s->dmabuf_fd = bench_udmabuf(o, &s->src);
	memset(s->src, 0x5a, o->buf_size);
	if (o->mode == TX_COPY)
		return;
	for (i = 0; i < o->flows; i++) {
		s->flows[i].len = calloc(ZC_RING, sizeof(unsigned int));
		if (!s->flows[i].len)
			fail("out of memory");
	}
	if (o->mode != TX_DEVMEM)
		return;
	if (!o->ifname)
		fail("devmem tx needs -f IFNAME");
	ifindex = bench_ifindex(o);
	bench_nl_open(&s->nl);
	err = devmem_bind_tx(&s->nl, ifindex, s->dmabuf_fd, &s->binding_id,
			     extack, sizeof(extack));
	if (err)
		fail("bind-tx %s: %s%s%s", o->ifname, strerror(-err),
		     *extack ? ": " : "", extack);
	s->bound = true;
}

/* Read MSG_ZEROCOPY notifications of @f until the error queue is empty. */
static void tx_reap(struct tx_state *s, struct tx_flow *f)
{
	union {
		char buf[ZC_CTRL_LEN];
		struct cmsghdr align;
	} ctrl;
	struct sock_extended_err ee;
	struct cmsghdr *cm;
	struct msghdr msg;
	unsigned int c;
	bool found;

	for (;;) {
		memset(&msg, 0, sizeof(msg));
		msg.msg_control = ctrl.buf;
		msg.msg_controllen = sizeof(ctrl.buf);
		if (recvmsg(f->fd, &msg, MSG_ERRQUEUE | MSG_DONTWAIT) < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return;
			fail("recvmsg(MSG_ERRQUEUE): %s", strerror(errno));
		}
		found = false;
		for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
			if ((cm->cmsg_level == SOL_IP &&
			     cm->cmsg_type == IP_RECVERR) ||
			    (cm->cmsg_level == SOL_IPV6 &&
			     cm->cmsg_type == IPV6_RECVERR)) {
				memcpy(&ee, CMSG_DATA(cm), sizeof(ee));
				found = true;
			}
		}
		if (!found || ee.ee_origin != SO_EE_ORIGIN_ZEROCOPY ||
		    ee.ee_errno)
			fail("unexpected error queue message");
		if (ee.ee_info != f->completed ||
		    ee.ee_data - ee.ee_info >= f->calls - f->completed)
			fail("completion of calls %u..%u, expected from %u of %u",
			     ee.ee_info, ee.ee_data, f->completed, f->calls);
		for (c = ee.ee_info; c != ee.ee_data + 1; c++) {
			s->zc_completions++;
			if (ee.ee_code & SO_EE_CODE_ZEROCOPY_COPIED) {
				s->zc_copied++;
				s->zc_copied_bytes += f->len[c % ZC_RING];
			}
		}
		f->completed = ee.ee_data + 1;
		if (f->wait_zc) {
			f->wait_zc = false;
			epoll_set(s->ep, EPOLL_CTL_MOD, f->fd, EPOLLOUT,
				  f - s->flows);
		}
	}
}

/* One send call of up to -z bytes on @f: bytes, or -1 if it would block. */
static ssize_t tx_one(struct tx_state *s, struct tx_flow *f)
{
	const struct opts *o = s->o;
	unsigned long long len = f->left < o->chunk ? f->left : o->chunk;
	struct iovec iov;
	ssize_t n;

	if (f->off + len > s->src_size)
		f->off = 0;
	switch (o->mode) {
	case TX_PLAIN:
		n = send(f->fd, s->src, len, MSG_DONTWAIT | MSG_NOSIGNAL);
		break;
	case TX_COPY:
		n = send(f->fd, s->src + f->off, len,
			 MSG_DONTWAIT | MSG_NOSIGNAL);
		break;
	case TX_ZEROCOPY:
		n = send(f->fd, s->src + f->off, len,
			 MSG_ZEROCOPY | MSG_DONTWAIT | MSG_NOSIGNAL);
		break;
	default:
		/* devmem: iov_base is an offset into the dma-buf */
		iov.iov_base = (void *)(uintptr_t)f->off;
		iov.iov_len = len;
		n = devmem_sendmsg(f->fd, s->binding_id, &iov, 1,
				   MSG_ZEROCOPY | MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0) {
			errno = -n;
			n = -1;
		}
		break;
	}
	if (n < 0) {
		if (errno == EAGAIN || errno == EINTR)
			return -1;
		if (errno == ENOBUFS && f->len) {
			/* notifications in flight fill the option memory */
			s->enobufs++;
			if (f->calls == f->completed)
				return -1;
			f->wait_zc = true;
			epoll_set(s->ep, EPOLL_CTL_MOD, f->fd, 0,
				  f - s->flows);
			return -1;
		}
		fail("send: %s", strerror(errno));
	}
	if (!n)
		fail("send returned 0");
	s->send_calls++;
	s->bytes += n;
	if (o->mode == TX_PLAIN || o->mode == TX_COPY)
		s->bytes_copied += n;
	if (f->len) {
		if (f->calls - f->completed >= ZC_RING)
			fail("more than %d zerocopy calls in flight", ZC_RING);
		f->len[f->calls % ZC_RING] = n;
		f->calls++;
	}
	f->off += n;
	f->left -= n;
	return n;
}

/* @f sent everything: wait for its completions, then SHUT_WR. */
/*
 * @f sent everything and had its completions: SHUT_WR once the peer has
 * acknowledged every byte.  The FIN must not ride on the last TSO burst:
 * QEMU's igb (10.0) drops FIN and PSH when it segments, the receiver then
 * sees the FIN only when the sender probes for the lost tail (TLP, some
 * 200 ms later).  Returns whether the flow is still draining.
 */
static bool tx_maybe_shut(struct tx_state *s, struct tx_flow *f)
{
	int outq = 0;

	if (f->shut || f->left || (f->len && f->completed != f->calls))
		return false;
	if (ioctl(f->fd, SIOCOUTQ, &outq))
		fail("SIOCOUTQ: %s", strerror(errno));
	if (outq > 0) {
		if (!f->draining)
			epoll_set(s->ep, EPOLL_CTL_MOD, f->fd, 0,
				  f - s->flows);
		f->draining = true;
		return true;
	}
	if (shutdown(f->fd, SHUT_WR))
		fail("shutdown: %s", strerror(errno));
	f->draining = false;
	f->shut = true;
	epoll_set(s->ep, EPOLL_CTL_MOD, f->fd, EPOLLIN, f - s->flows);
	return false;
}

static void tx_event(struct tx_state *s, struct tx_flow *f, unsigned int ev)
{
	char buf[256];
	ssize_t n;
	int j;

	if (f->len && (ev & EPOLLERR))
		tx_reap(s, f);
	if (f->shut) {
		n = recv(f->fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n > 0 || (n < 0 && (errno == EAGAIN || errno == EINTR)))
			return;
		f->done = true;
		epoll_set(s->ep, EPOLL_CTL_DEL, f->fd, 0, 0);
		return;
	}
	for (j = 0; j < RX_FAIRNESS && f->left && !f->wait_zc; j++)
		if (tx_one(s, f) < 0)
			break;
	if (f->len)
		tx_reap(s, f);
	if (!f->left && !f->shut && f->len && f->completed != f->calls) {
		/* sent all: only completions are awaited (EPOLLERR) */
		epoll_set(s->ep, EPOLL_CTL_MOD, f->fd, 0, f - s->flows);
	}
	tx_maybe_shut(s, f);
}

static void tx_print(const struct tx_state *s, const struct sample *a,
		     const struct sample *b)
{
	const struct opts *o = s->o;

	print_transfer(o, "tx", tx_modes[o->mode], s->bytes,
		       s->bytes_copied + s->zc_copied_bytes, a, b);
	printf("send_calls: %llu\n", s->send_calls);
	printf("zc_completions: %llu\n", s->zc_completions);
	printf("zc_copied: %llu\n", s->zc_copied);
	printf("zc_enobufs: %llu\n", s->enobufs);
	print_sample_delta(o, a, b);
}

static int tx_main(const struct opts *o)
{
	struct epoll_event evs[MAX_FLOWS];
	struct sample a, b;
	unsigned int i, open, draining = 0;
	struct tx_state s;
	int n, k, one = 1;
	char go;

	memset(&s, 0, sizeof(s));
	s.o = o;
	side_start(o);
	tx_setup(&s);

	s.ep = epoll_create1(EPOLL_CLOEXEC);
	if (s.ep < 0)
		fail("epoll: %s", strerror(errno));
	for (i = 0; i < o->flows; i++) {
		struct tx_flow *f = &s.flows[i];

		f->fd = connect_one(o);
		f->left = o->bytes / o->flows + (i < o->bytes % o->flows);
		/*
		 * A window-limited sender sends segments shorter than the MSS;
		 * Nagle then waits for the ACK the receiver delays (up to
		 * 200 ms): a stall that would depend on timers, not on CPU.
		 */
		if (setsockopt(f->fd, IPPROTO_TCP, TCP_NODELAY, &one,
			       sizeof(one)))
			fail("TCP_NODELAY: %s", strerror(errno));
		if (f->len && setsockopt(f->fd, SOL_SOCKET, SO_ZEROCOPY, &one,
					 sizeof(one)))
			fail("SO_ZEROCOPY: %s", strerror(errno));
	}
	/* the receiver says go on every flow once it has them all */
	for (i = 0; i < o->flows; i++)
		if (recv(s.flows[i].fd, &go, 1, MSG_WAITALL) != 1)
			fail("waiting for go: %s", strerror(errno));
	take_sample(o->cpu, &a);
	marker(o->marker, 0);
	for (i = 0; i < o->flows; i++) {
		set_nonblock(s.flows[i].fd);
		epoll_set(s.ep, EPOLL_CTL_ADD, s.flows[i].fd, EPOLLOUT, i);
	}

	open = o->flows;
	while (open) {
		/* draining flows are looked at every DRAIN_POLL_MS */
		n = epoll_wait(s.ep, evs, MAX_FLOWS, draining ? DRAIN_POLL_MS : -1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			fail("epoll_wait: %s", strerror(errno));
		}
		for (k = 0; k < n; k++) {
			struct tx_flow *f = &s.flows[evs[k].data.u32];

			if (f->done)
				continue;
			tx_event(&s, f, evs[k].events);
			if (f->done)
				open--;
		}
		draining = 0;
		for (i = 0; i < o->flows; i++)
			if (s.flows[i].draining)
				draining += tx_maybe_shut(&s, &s.flows[i]);
	}
	marker(o->marker, 1);
	take_sample(o->cpu, &b);

	for (i = 0; i < o->flows; i++)
		close(s.flows[i].fd);
	if (s.bound)
		nl_close(&s.nl);
	tx_print(&s, &a, &b);
	return 0;
}

/* ---- bind: time and memory of a binding --------------------------------- */

/* Slab + VmallocUsed and MemFree of /proc/meminfo, in bytes. */
static void read_meminfo(unsigned long long *kmem, unsigned long long *free_b)
{
	static const char *const keys[] = {
		"Slab", "VmallocUsed", "MemFree", NULL
	};
	unsigned long long kb[3] = { 0 };
	int err;

	err = devmem_read_meminfo(keys, kb);
	if (err < 0)
		fail("/proc/meminfo: %s", strerror(-err));
	*kmem = (kb[0] + kb[1]) << 10;
	*free_b = kb[2] << 10;
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a;
	long long y = *(const long long *)b;

	return x < y ? -1 : x > y;
}

static long long median_ll(long long *v, unsigned int n)
{
	qsort(v, n, sizeof(*v), cmp_ll);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int bind_main(const struct opts *o)
{
	unsigned long long k0, k1, f0, f1, t0, t1, t2, pages;
	long long *bind_ns, *unbind_ns, *kmem, *mfree;
	char extack[NL_EXTACK_LEN];
	unsigned int q = o->queue, r;
	struct nl_ctx nl;
	int ifindex, fd, err;
	__u32 id;

	if (!o->ifname)
		die_usage();
	ifindex = bench_ifindex(o);
	bind_ns = calloc(o->reps, sizeof(*bind_ns));
	unbind_ns = calloc(o->reps, sizeof(*unbind_ns));
	kmem = calloc(o->reps, sizeof(*kmem));
	mfree = calloc(o->reps, sizeof(*mfree));
	if (!bind_ns || !unbind_ns || !kmem || !mfree)
		fail("out of memory");
	pages = o->buf_size / getpagesize();

	fd = udmabuf_create(o->buf_size, NULL);
	if (fd < 0)
		fail("udmabuf of %llu bytes: %s (udmabuf.size_limit_mb?)",
		     o->buf_size, strerror(-fd));
	for (r = 0; r < o->reps; r++) {
		bench_nl_open(&nl);
		extack[0] = '\0';
		read_meminfo(&k0, &f0);
		t0 = devmem_now_ns();
		err = devmem_bind_rx(&nl, ifindex, fd, &q, 1, &id, extack,
				     sizeof(extack));
		t1 = devmem_now_ns();
		if (err)
			fail("bind-rx %s queue %u: %s%s%s", o->ifname, q,
			     strerror(-err), *extack ? ": " : "", extack);
		read_meminfo(&k1, &f1);
		t2 = devmem_now_ns();
		nl_close(&nl);
		unbind_ns[r] = devmem_now_ns() - t2;
		bind_ns[r] = t1 - t0;
		kmem[r] = (long long)(k1 - k0);
		mfree[r] = (long long)(f0 - f1);
		/* the queue restarts on host memory; let it settle */
		usleep(100000);
	}
	close(fd);

	printf("role: bind\n");
	printf("dmabuf_size: %llu\n", o->buf_size);
	printf("pages: %llu\n", pages);
	printf("reps: %u\n", o->reps);
	printf("bind_ns: %lld\n", median_ll(bind_ns, o->reps));
	printf("unbind_ns: %lld\n", median_ll(unbind_ns, o->reps));
	printf("bind_ns_per_page: %.2f\n",
	       (double)median_ll(bind_ns, o->reps) / pages);
	printf("kmem_bytes: %lld\n", median_ll(kmem, o->reps));
	printf("kmem_bytes_per_page: %.2f\n",
	       (double)median_ll(kmem, o->reps) / pages);
	printf("memfree_drop_bytes: %lld\n", median_ll(mfree, o->reps));
	printf("memfree_drop_per_page: %.2f\n",
	       (double)median_ll(mfree, o->reps) / pages);
	return 0;
}

int main(int argc, char **argv)
{
	const char *cmd, *mode = NULL;
	struct opts o;

	if (argc < 2)
		die_usage();
	cmd = argv[1];
	if (!strcmp(cmd, "rx") || !strcmp(cmd, "tx")) {
		if (argc < 3)
			die_usage();
		mode = argv[2];
		parse_opts(argc - 2, argv + 2, &o);
		o.mode = lookup_mode(!strcmp(cmd, "rx") ? rx_modes : tx_modes,
				     mode);
		if (o.mode < 0)
			die_usage();
		return !strcmp(cmd, "rx") ? rx_main(&o) : tx_main(&o);
	}
	if (!strcmp(cmd, "bind")) {
		parse_opts(argc - 1, argv + 1, &o);
		return bind_main(&o);
	}
	die_usage();
	return 2;
}
