// SPDX-License-Identifier: GPL-2.0
/*
 * ncdevmem - a netcat-like tool for devmem TCP.
 *
 * The short options are mainline ncdevmem's, with the same meanings, so
 * that scripts written for it run unchanged; this tree's extras are long
 * options (--client-port, --bytes, --buf-size, --iovecs).
 *
 * Server (-l): switches tcp-data-split on and hds-thresh to 0 (every frame
 * split at its payload, so that no payload byte stays in host memory) for
 * -f IFNAME, steers the test flow to RX queues QUEUE..QUEUE+N-1 (-t, -q),
 * binds a udmabuf to those queues through the netdev netlink family,
 * accepts one TCP connection and receives it with
 * recvmsg(MSG_SOCK_DEVMEM): payload lands in the udmabuf and is reported by
 * SCM_DEVMEM_DMABUF cmsgs (whose tokens are given back with
 * SO_DEVMEM_DONTNEED), bytes the kernel had in host memory are copied to
 * the iovec and reported by SCM_DEVMEM_LINEAR cmsgs (-L makes any such byte
 * a failure). With -n the NIC is used as the user set it up. At EOF it
 * prints a summary, one "key: value" per line on stdout, and undoes every
 * change it made to the device.  Everything else goes to stderr, except
 * the line "listening", printed on stdout once the server accepts
 * connections.
 *
 * Client (no -l): connects to the server, sends standard input (or, with
 * --bytes, that many bytes of the pattern) in send() calls of up to -z
 * bytes, shuts the connection down for writing and waits for the server
 * to close it.
 *
 * Client with -f IFNAME: devmem TX.  Before connecting, the client binds a
 * udmabuf of --buf-size bytes for transmit on IFNAME (bind-tx; the binding
 * lasts as long as the netlink socket, which is closed last).  The
 * connection gets SO_ZEROCOPY and the stream goes out with
 * sendmsg(MSG_ZEROCOPY) calls of up to -z bytes, each carrying an
 * SCM_DEVMEM_DMABUF cmsg with the binding id and --iovecs iovecs whose
 * iov_base is a byte offset into the udmabuf (not an address): the call's
 * bytes split into nearly equal, contiguous pieces.  Standard input is
 * read into the udmabuf, sent, and waited for (every MSG_ZEROCOPY
 * completion) before the next read overwrites it.  With --bytes the
 * udmabuf is filled with the pattern through its mmap once, and stream
 * position i is sent from udmabuf offset i % L, where L is the largest
 * multiple of the pattern period (-v) not above the udmabuf's size, so the
 * stream stays continuous when the offset wraps; no call crosses the wrap.
 * The completions are reaped from the error queue after every call and all
 * of them are waited for (ZC_WAIT_SEC at most) before the shutdown.
 * IFNAME must be the device of the route to the server (else ENODEV).
 *
 * The pattern, mainline's: with -v N (2 <= N <= 256) the stream repeats
 * the bytes 1, 2, ..., N-1, '\n'; the server checks it, and the client
 * sends it with --bytes.  Without -v the client sends zeros (--bytes) and
 * the server checks nothing.
 *
 * Steering: the igb driver of this series steers one flow by pointing the
 * RSS bucket of the flow's 4-tuple at the queue, so a flow rule needs both
 * -c and --client-port.  Then RSS is limited to queues 0..QUEUE-1
 * ("ethtool -X IF equal QUEUE") and "ethtool -N IF flow-type ... action
 * QUEUE loc 0" is added.  Without --client-port no rule is added and the
 * whole RSS table points at the bound queues instead ("ethtool -X IF
 * weight ...").
 *
 * Summary keys (server): bytes_total, bytes_dmabuf, bytes_linear, frags
 * (SCM_DEVMEM_DMABUF fragments, i.e. tokens received), tokens_freed,
 * dontneed_calls, recvmsg_calls, validation_errors, seconds,
 * throughput_mbps.  Client: bytes_sent, bytes_devmem_tx (sent from the
 * udmabuf, 0 without -f), sendmsg_calls (send() or sendmsg() calls that
 * queued bytes), zc_completions and zc_copied (calls the MSG_ZEROCOPY
 * notifications reported complete, and of those, reported copied by the
 * kernel: expected 0), seconds, throughput_mbps.  The client prints its
 * summary only when everything went well.
 *
 * Exit status: 0 on success (zc_copied != 0 included), 1 on any failure,
 * 2 on bad usage.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <liburing.h>
#include <linux/dma-buf.h>
#include <linux/errqueue.h>

#include "devmem/devmem_lib.h"

#define DEFAULT_PORT		5201
#define DEFAULT_SIZE		(64ULL << 20)
#define DEFAULT_CHUNK		(64ULL << 10)
#define MAX_CHUNK		(256ULL << 20)

/* devmem TX: iovecs per sendmsg (--iovecs), and the wait for completions */
#define MAX_TX_IOVECS		64
#define ZC_WAIT_SEC		60

/* room for the IP_RECVERR / IPV6_RECVERR cmsg of a zerocopy notification */
#define ZC_CTRL_LEN		256

/* recvmsg buffers: linear bytes, and room for this many cmsgs */
#define RX_IOV_SIZE		(64 << 10)
#define RX_MAX_CMSGS		1024

/* SO_DEVMEM_DONTNEED limits of one call */
#define DONTNEED_MAX_RANGES	128
#define DONTNEED_MAX_TOKENS	1024

/* mismatches printed to stderr */
#define MAX_REPORTED_ERRORS	10

/* how long the client retries a refused connect, and the carrier wait */
#define CONNECT_RETRY_SEC	10
#define CARRIER_WAIT_SEC	10

/* the single steering rule location used */
#define RULE_LOC		"0"

/* most arguments ethtool() passes on */
#define MAX_ETHTOOL_ARGS	24

/* Long options of this tree's own, beyond mainline's short ones. */
enum {
	OPT_CLIENT_PORT = 256,
	OPT_BYTES,
	OPT_BUF_SIZE,
	OPT_IOVECS,
	OPT_IO_URING,
};

struct opts {
	bool server;			/* -l */
	int family;			/* AF_INET or AF_INET6, from -s */
	struct sockaddr_storage srv;	/* -s, with -p */
	bool have_cli;
	struct sockaddr_storage cli;	/* -c, with --client-port (or 0) */
	unsigned int srv_port;		/* -p */
	unsigned int cli_port;		/* --client-port, 0 if not given */
	const char *ifname;		/* -f: server NIC, or client devmem TX */
	long queue;			/* -t, -1 for the default */
	long nqueues;			/* -q */
	unsigned int pattern;		/* -v, 0 without validation */
	bool fail_on_linear;		/* -L */
	bool keep_nic_config;		/* -n */
	bool from_stdin;		/* client: no --bytes */
	bool selftest;			/* -f alone */
	bool io_uring;			/* --io-uring */
	unsigned long long send_bytes;	/* --bytes */
	unsigned long long buf_size;	/* --buf-size */
	unsigned long long chunk;	/* -z */
	unsigned int niov;		/* --iovecs, per devmem sendmsg */
};

static void print_help(FILE *f)
{
	fprintf(f,
		"usage: ncdevmem -l -f IFNAME -s SERVER_ADDR [-c CLIENT_ADDR [--client-port PORT]]\n"
		"                [-p PORT] [-t QUEUE] [-q NQUEUES] [-v N] [-L] [-n]\n"
		"                [--buf-size BYTES]\n"
		"       ncdevmem -f IFNAME                    (self-test of the NIC's bind-rx)\n"
		"       ncdevmem -s SERVER_ADDR [-c CLIENT_ADDR] [--client-port PORT] [-p PORT]\n"
		"                [-z BYTES] [-v N] [--bytes BYTES]\n"
		"                [-f IFNAME [--buf-size BYTES] [--iovecs N]]\n"
		"\n"
		"The short options are mainline ncdevmem's, with its meanings.\n"
		"  -l          server: receive one connection into a udmabuf\n"
		"  -s ADDR     server address (IPv6, IPv4 or v4-mapped IPv6)\n"
		"  -c ADDR     client address (client binds to it, server steers on it)\n"
		"  -p PORT     server port (default %d)\n"
		"  -f IFNAME   server: NIC to receive on; client: send with devmem TX\n"
		"              from a udmabuf bound to IFNAME (the route's device)\n"
		"  -t QUEUE    first RX queue to bind (default: the last NQUEUES queues)\n"
		"  -q NQUEUES  number of RX queues to bind (default 1)\n"
		"  -v N        validate the repeating pattern 1, 2, ..., N-1, '\\n'\n"
		"              (the client sends it with --bytes), 2..256\n"
		"  -L          server: fail when any payload byte lands in host memory\n"
		"  -n          server: leave the NIC configuration alone (header split,\n"
		"              hds-thresh, RSS, flow rules)\n"
		"  -z BYTES    client: bytes per send() / sendmsg() at most (default 64K)\n"
		"  -h, --help  this help\n"
		"This tree's own options:\n"
		"  --client-port PORT  client binds to it; with -c the server steers the\n"
		"              flow (src and dst address and port) to the first queue\n"
		"  --bytes BYTES       client: send BYTES of the -v pattern (zeros\n"
		"              without -v) instead of standard input\n"
		"  --buf-size BYTES    udmabuf size, page multiple (default 64M)\n"
		"  --iovecs N          devmem TX client: iovecs per sendmsg, 1..%d\n"
		"              (default 1)\n"
		"  --io-uring          receive (server) and send (devmem TX client)\n"
		"              through io_uring: IORING_OP_RECVMSG, IORING_OP_SENDMSG_ZC\n"
		"BYTES take a K, M or G suffix (powers of 1024).\n",
		DEFAULT_PORT, MAX_TX_IOVECS);
}

/* ---- the -v pattern ---------------------------------------------------- */

/* Byte @k of a period of mainline's pattern: 1, 2, ..., N-1, '\n'. */
static unsigned char pattern_byte(unsigned int k, unsigned int n)
{
	return k == n - 1 ? '\n' : k + 1;
}

/* @len bytes of the pattern of period @n, starting at byte @phase. */
static void pattern_fill(unsigned char *p, size_t len, unsigned int phase,
			 unsigned int n)
{
	size_t i;

	for (i = 0; i < len; i++) {
		p[i] = pattern_byte(phase, n);
		if (++phase == n)
			phase = 0;
	}
}

/* ---- option parsing ---------------------------------------------------- */

/* Decimal number in [min, max]: 0, or -1 if it is not one. */
static int parse_ulong(const char *s, unsigned long min, unsigned long max,
		       unsigned long *out)
{
	unsigned long v;
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

/* The address of @ss as text (no port). */
static const char *addr_str(const struct sockaddr_storage *ss, char *buf,
			    size_t len)
{
	const void *a;

	if (ss->ss_family == AF_INET6)
		a = &((const struct sockaddr_in6 *)ss)->sin6_addr;
	else
		a = &((const struct sockaddr_in *)ss)->sin_addr;
	if (!inet_ntop(ss->ss_family, a, buf, len))
		snprintf(buf, len, "?");
	return buf;
}

static unsigned int addr_port(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
	return ntohs(((const struct sockaddr_in *)ss)->sin_port);
}

/* One option letter and its argument into @o: 0, or -1 if invalid. */
static int parse_one(struct opts *o, int c, const char *arg)
{
	unsigned long v;

	switch (c) {
	case 'l':
		o->server = true;
		return 0;
	case 's':
		o->family = devmem_parse_addr(arg, &o->srv);
		return o->family < 0 ? -1 : 0;
	case 'c':
		o->have_cli = true;
		return devmem_parse_addr(arg, &o->cli) < 0 ? -1 : 0;
	case 'p':
	case OPT_CLIENT_PORT:
		if (parse_ulong(arg, 1, 65535, &v))
			return -1;
		*(c == 'p' ? &o->srv_port : &o->cli_port) = v;
		return 0;
	case 'f':
		o->ifname = arg;
		return 0;
	case 't':
	case 'q':
		if (parse_ulong(arg, c == 'q', 4096, &v))
			return -1;
		*(c == 't' ? &o->queue : &o->nqueues) = v;
		return 0;
	case 'v':
		if (parse_ulong(arg, 2, 256, &v))
			return -1;
		o->pattern = v;
		return 0;
	case 'L':
		o->fail_on_linear = true;
		return 0;
	case 'n':
		o->keep_nic_config = true;
		return 0;
	case OPT_BYTES:
		o->from_stdin = false;
		return devmem_parse_size(arg, &o->send_bytes);
	case OPT_BUF_SIZE:
		return devmem_parse_size(arg, &o->buf_size);
	case 'z':
		return devmem_parse_size(arg, &o->chunk);
	case OPT_IOVECS:
		if (parse_ulong(arg, 1, MAX_TX_IOVECS, &v))
			return -1;
		o->niov = v;
		return 0;
	case OPT_IO_URING:
		o->io_uring = true;
		return 0;
	}
	return -1;
}

/* Checks that need every option: 0, or -1 after printing why. */
static int check_opts(struct opts *o)
{
	long page = sysconf(_SC_PAGESIZE);

	if (o->selftest)
		return 0;
	if (!o->family) {
		fprintf(stderr, "ncdevmem: -s is required\n");
		return -1;
	}
	if (o->have_cli && o->cli.ss_family != o->family) {
		fprintf(stderr, "ncdevmem: -s and -c are of different families\n");
		return -1;
	}
	if (o->server && !o->ifname) {
		fprintf(stderr, "ncdevmem: the server needs -f IFNAME\n");
		return -1;
	}
	if (o->server && o->cli_port && !o->have_cli) {
		fprintf(stderr, "ncdevmem: a steering rule needs -c with --client-port\n");
		return -1;
	}
	if (!o->buf_size || o->buf_size % page || o->buf_size > SIZE_MAX) {
		fprintf(stderr, "ncdevmem: --buf-size must be a non-zero page multiple\n");
		return -1;
	}
	if (!o->chunk || o->chunk > MAX_CHUNK) {
		fprintf(stderr, "ncdevmem: -z must be 1..%llu\n", MAX_CHUNK);
		return -1;
	}
	if (o->niov != 1 && (o->server || !o->ifname)) {
		fprintf(stderr, "ncdevmem: --iovecs is for the devmem TX client (-f without -l)\n");
		return -1;
	}
	if (o->io_uring && !o->server && !o->ifname) {
		fprintf(stderr,
			"ncdevmem: --io-uring is for the server and the devmem TX client\n");
		return -1;
	}
	if ((o->fail_on_linear || o->keep_nic_config) && !o->server) {
		fprintf(stderr, "ncdevmem: -L and -n are for the server (-l)\n");
		return -1;
	}
	devmem_set_port(&o->srv, o->srv_port);
	if (!o->have_cli)
		o->cli.ss_family = o->family;
	devmem_set_port(&o->cli, o->cli_port);
	return 0;
}

static const struct option long_opts[] = {
	{ "client-port", required_argument, NULL, OPT_CLIENT_PORT },
	{ "bytes", required_argument, NULL, OPT_BYTES },
	{ "buf-size", required_argument, NULL, OPT_BUF_SIZE },
	{ "iovecs", required_argument, NULL, OPT_IOVECS },
	{ "io-uring", no_argument, NULL, OPT_IO_URING },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* How the user wrote option @c. */
static const char *opt_name(int c)
{
	static char name[32] = "-?";
	const struct option *lo;

	for (lo = long_opts; lo->name; lo++) {
		if (lo->val == c && c >= OPT_CLIENT_PORT) {
			snprintf(name, sizeof(name), "--%s", lo->name);
			return name;
		}
	}
	snprintf(name, sizeof(name), "-%c", c);
	return name;
}

/* getopt_long into @o: 0, 1 for -h, or -1 on bad usage. */
static int parse_opts(int argc, char **argv, struct opts *o)
{
	int c;

	memset(o, 0, sizeof(*o));
	o->srv_port = DEFAULT_PORT;
	o->queue = -1;
	o->nqueues = 1;
	o->send_bytes = DEFAULT_SIZE;
	o->buf_size = DEFAULT_SIZE;
	o->chunk = DEFAULT_CHUNK;
	o->niov = 1;
	o->from_stdin = true;

	/* "-f IFNAME" and nothing else: the self-test */
	o->selftest = argc == 3 && !strcmp(argv[1], "-f");
	while ((c = getopt_long(argc, argv, "ls:c:p:f:t:q:v:Lnz:h", long_opts,
				NULL)) != -1) {
		if (c == 'h')
			return 1;
		if (c == '?')
			return -1;
		if (parse_one(o, c, optarg)) {
			fprintf(stderr, "ncdevmem: bad value for %s: %s\n",
				opt_name(c), optarg);
			return -1;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "ncdevmem: unexpected argument %s\n",
			argv[optind]);
		return -1;
	}
	return check_opts(o);
}

/* ---- io_uring (--io-uring) -------------------------------------------- */

/* The ring of --io-uring; one request is in flight at a time. */
static struct io_uring ring;
static bool ring_ready;

/*
 * sendmsg_zc notifications: every call whose completion is marked
 * IORING_CQE_F_MORE (failed ones too) gets one notification later, when
 * the NIC is done with its bytes.
 */
struct ring_notifs {
	unsigned long long seen;	/* notifications received */
	long long pending;		/* announced and not yet received */
};

static int ring_setup(void)
{
	int err = io_uring_queue_init(64, &ring, 0);

	if (err) {
		fprintf(stderr, "ncdevmem: io_uring: %s\n", strerror(-err));
		return -1;
	}
	ring_ready = true;
	return 0;
}

static void ring_cleanup(void)
{
	if (ring_ready)
		io_uring_queue_exit(&ring);
	ring_ready = false;
}

/*
 * Submit the prepared request and wait for its completion, accounting in
 * @notifs (NULL on receive) the notifications that come meanwhile and the
 * one the completion announces. Returns its result: >= 0, or -1 with
 * errno set.
 */
static ssize_t ring_run(struct ring_notifs *notifs)
{
	struct io_uring_cqe *cqe;
	unsigned int flags;
	int res, err;

	err = io_uring_submit(&ring);
	if (err != 1) {
		errno = err < 0 ? -err : EIO;
		return -1;
	}
	for (;;) {
		err = io_uring_wait_cqe(&ring, &cqe);
		if (err == -EINTR)
			continue;
		if (err) {
			errno = -err;
			return -1;
		}
		flags = cqe->flags;
		res = cqe->res;
		io_uring_cqe_seen(&ring, cqe);
		if (!(flags & IORING_CQE_F_NOTIF))
			break;
		if (notifs) {
			notifs->seen++;
			notifs->pending--;
		}
	}
	if (notifs && (flags & IORING_CQE_F_MORE))
		notifs->pending++;
	if (res < 0) {
		errno = -res;
		return -1;
	}
	return res;
}

/* IORING_OP_RECVMSG of @msg with @flags. */
static ssize_t ring_recvmsg(int fd, struct msghdr *msg, int flags)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

	io_uring_prep_recvmsg(sqe, fd, msg, flags);
	return ring_run(NULL);
}

/* IORING_OP_SENDMSG_ZC of @msg. */
static ssize_t ring_sendmsg_zc(int fd, struct msghdr *msg,
			       struct ring_notifs *notifs)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

	io_uring_prep_sendmsg_zc(sqe, fd, msg, MSG_NOSIGNAL);
	return ring_run(notifs);
}

/* Account the notifications already there, after waiting up to @ms for
 * one.
 */
static void ring_reap(struct ring_notifs *notifs, int ms)
{
	struct __kernel_timespec ts = {
		.tv_sec = ms / 1000,
		.tv_nsec = (ms % 1000) * 1000000L,
	};
	struct io_uring_cqe *cqe;

	if (ms && !io_uring_wait_cqe_timeout(&ring, &cqe, &ts)) {
		if (cqe->flags & IORING_CQE_F_NOTIF) {
			notifs->seen++;
			notifs->pending--;
		}
		io_uring_cqe_seen(&ring, cqe);
	}
	while (!io_uring_peek_cqe(&ring, &cqe)) {
		if (cqe->flags & IORING_CQE_F_NOTIF) {
			notifs->seen++;
			notifs->pending--;
		}
		io_uring_cqe_seen(&ring, cqe);
	}
}

/* ---- helpers: ethtool, sysfs, signals ---------------------------------- */

/*
 * Run @argv (argv[0] found in PATH) and wait for it.  Its stdout goes to
 * our stderr, keeping our stdout for the summary.  0 if it exited with
 * status 0, else -1.
 */
static int run_cmd(const char *const argv[])
{
	int status, i;
	pid_t pid;

	fprintf(stderr, "ncdevmem: running:");
	for (i = 0; argv[i]; i++)
		fprintf(stderr, " %s", argv[i]);
	fprintf(stderr, "\n");
	fflush(stdout);
	fflush(stderr);

	pid = fork();
	if (pid < 0) {
		perror("ncdevmem: fork");
		return -1;
	}
	if (!pid) {
		sigset_t set;

		/* the server blocks these; the command must not inherit that */
		sigemptyset(&set);
		sigaddset(&set, SIGINT);
		sigaddset(&set, SIGTERM);
		sigprocmask(SIG_UNBLOCK, &set, NULL);
		dup2(STDERR_FILENO, STDOUT_FILENO);
		execvp(argv[0], (char *const *)argv);
		fprintf(stderr, "ncdevmem: exec %s: %s\n", argv[0],
			strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			perror("ncdevmem: waitpid");
			return -1;
		}
	}
	if (WIFEXITED(status) && !WEXITSTATUS(status))
		return 0;
	if (WIFEXITED(status))
		fprintf(stderr, "ncdevmem: %s %s failed (exit status %d)\n",
			argv[0], argv[1], WEXITSTATUS(status));
	else
		fprintf(stderr, "ncdevmem: %s %s killed by signal %d\n",
			argv[0], argv[1], WTERMSIG(status));
	return -1;
}

/* "ethtool ARG...": the arguments end with NULL. */
static int ethtool(const char *arg, ...)
{
	const char *argv[MAX_ETHTOOL_ARGS + 2];
	va_list ap;
	int n = 0;

	argv[n++] = "ethtool";
	va_start(ap, arg);
	for (; arg && n <= MAX_ETHTOOL_ARGS; arg = va_arg(ap, const char *))
		argv[n++] = arg;
	va_end(ap);
	argv[n] = NULL;
	return run_cmd(argv);
}

/* Wait a while for the link to be up (switching header split resets it). */
static void wait_carrier(const char *ifname)
{
	char path[PATH_MAX], c;
	int i, fd;

	snprintf(path, sizeof(path), "/sys/class/net/%s/carrier", ifname);
	for (i = 0; i < CARRIER_WAIT_SEC * 10; i++) {
		fd = open(path, O_RDONLY);
		c = 0;
		if (fd >= 0) {
			if (read(fd, &c, 1) != 1)
				c = 0;
			close(fd);
		}
		if (c == '1')
			return;
		usleep(100000);
	}
	fprintf(stderr, "ncdevmem: warning: %s has no carrier\n", ifname);
}

static void on_signal(int sig)
{
	/* nothing: the signal only interrupts wait_readable()'s ppoll() */
	(void)sig;
}

/*
 * The server keeps SIGINT and SIGTERM blocked except while it waits in
 * wait_readable(), so a signal never cuts a setup step in half and always
 * leads to the cleanup.  *@wait_mask gets the mask to wait with.
 */
static void block_signals(sigset_t *wait_mask)
{
	struct sigaction sa;
	sigset_t set;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, wait_mask);
	sigdelset(wait_mask, SIGINT);
	sigdelset(wait_mask, SIGTERM);
}

/* Wait for @fd to be readable: 0, or -1 (a signal asks us to stop). */
static int wait_readable(int fd, const sigset_t *wait_mask)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	if (ppoll(&pfd, 1, NULL, wait_mask) >= 0)
		return 0;
	if (errno == EINTR)
		fprintf(stderr, "ncdevmem: interrupted\n");
	else
		perror("ncdevmem: ppoll");
	return -1;
}

/* ---- server: device setup and teardown --------------------------------- */

struct server {
	const struct opts *o;
	sigset_t wait_mask;	/* signal mask while waiting */
	int ifindex;
	int nrxq;		/* RX queues of the device */
	int queue;		/* first bound queue */
	int saved_split;	/* tcp-data-split before we changed it */
	bool split_changed;
	__u32 saved_hds_thresh;	/* hds-thresh before we changed it */
	bool hds_thresh_changed;
	bool rss_changed;
	bool rule_added;
	int dmabuf_fd;
	void *map;
	struct nl_ctx nl;
	bool nl_ready;
	__u32 binding_id;
	int listen_fd;
	int fd;			/* the accepted connection */
};

struct rx_stats {
	unsigned long long bytes_total;
	unsigned long long bytes_dmabuf;
	unsigned long long bytes_linear;
	unsigned long long frags;
	unsigned long long tokens_freed;
	unsigned long long dontneed_calls;
	unsigned long long recvmsg_calls;
	unsigned long long validation_errors;
	unsigned long long bytes_readable;	/* without cmsgs, in bytes_linear */
	double seconds;
};

/* Device, queue range and saved state; nothing is changed yet. */
static int server_probe(struct server *s)
{
	const struct opts *o = s->o;

	s->ifindex = devmem_ifindex(o->ifname);
	if (s->ifindex < 0) {
		fprintf(stderr, "ncdevmem: %s: %s\n", o->ifname,
			strerror(-s->ifindex));
		return -1;
	}
	s->nrxq = devmem_rx_queue_count(o->ifname);
	if (s->nrxq <= 0) {
		fprintf(stderr, "ncdevmem: %s: no RX queues found in sysfs\n",
			o->ifname);
		return -1;
	}
	s->queue = o->queue >= 0 ? o->queue : s->nrxq - o->nqueues;
	if (s->queue < 0 || s->queue + o->nqueues > s->nrxq) {
		fprintf(stderr, "ncdevmem: queues %d..%ld out of range, %s has %d RX queues\n",
			s->queue, s->queue + o->nqueues - 1, o->ifname, s->nrxq);
		return -1;
	}
	s->saved_split = ethtool_get_tcp_data_split(s->ifindex);
	if (s->saved_split < 0)
		fprintf(stderr, "ncdevmem: warning: reading tcp-data-split: %s\n",
			strerror(-s->saved_split));
	return 0;
}

static int split_enable(struct server *s)
{
	char extack[NL_EXTACK_LEN] = "";
	int err;

	err = ethtool_set_tcp_data_split(s->ifindex, true, extack,
					 sizeof(extack));
	if (err) {
		fprintf(stderr, "ncdevmem: tcp-data-split on: %s%s%s\n",
			strerror(-err), *extack ? ": " : "", extack);
		return -1;
	}
	s->split_changed = s->saved_split != ETHTOOL_TCP_DATA_SPLIT_ENABLED;

	/* a device without hds-thresh cannot be asked for it */
	if (ethtool_get_hds_thresh(s->ifindex, &s->saved_hds_thresh, NULL) ||
	    !s->saved_hds_thresh)
		return 0;
	err = ethtool_set_hds_thresh(s->ifindex, 0, extack, sizeof(extack));
	if (err) {
		fprintf(stderr, "ncdevmem: hds-thresh 0: %s%s%s\n",
			strerror(-err), *extack ? ": " : "", extack);
		return -1;
	}
	s->hds_thresh_changed = true;
	return 0;
}

/* Put hds-thresh back; the unbind may take a moment (EINVAL meanwhile). */
static void hds_thresh_restore(struct server *s)
{
	char extack[NL_EXTACK_LEN] = "";
	int err, tries;

	if (!s->hds_thresh_changed)
		return;
	for (tries = 0; tries < 20; tries++) {
		err = ethtool_set_hds_thresh(s->ifindex, s->saved_hds_thresh,
					     extack, sizeof(extack));
		if (err != -EINVAL && err != -EBUSY)
			break;
		usleep(100000);
	}
	if (err)
		fprintf(stderr, "ncdevmem: warning: hds-thresh %u: %s%s%s\n",
			s->saved_hds_thresh, strerror(-err),
			*extack ? ": " : "", extack);
	s->hds_thresh_changed = false;
}

/* Turn tcp-data-split back off; the unbind may take a moment (EINVAL
 * meanwhile, as mainline refuses it while a memory provider is bound).
 */
static void split_restore(struct server *s)
{
	char extack[NL_EXTACK_LEN] = "";
	int err, tries;

	hds_thresh_restore(s);
	if (!s->split_changed)
		return;
	for (tries = 0; tries < 20; tries++) {
		err = ethtool_set_tcp_data_split(s->ifindex, false, extack,
						 sizeof(extack));
		if (err != -EINVAL && err != -EBUSY)
			break;
		usleep(100000);
	}
	if (err)
		fprintf(stderr, "ncdevmem: warning: tcp-data-split off: %s%s%s\n",
			strerror(-err), *extack ? ": " : "", extack);
	s->split_changed = false;
}

/*
 * "ethtool -X IF weight ...": weight @in on queues queue..queue+N-1,
 * @out on the others.
 */
static int rss_weights(struct server *s, const char *in, const char *out)
{
	const char **argv;
	int i, n = 0, err;

	argv = calloc(s->nrxq + 5, sizeof(*argv));
	if (!argv)
		return -1;
	argv[n++] = "ethtool";
	argv[n++] = "-X";
	argv[n++] = s->o->ifname;
	argv[n++] = "weight";
	for (i = 0; i < s->nrxq; i++)
		argv[n++] = i >= s->queue && i < s->queue + s->o->nqueues ?
			    in : out;
	argv[n] = NULL;
	err = run_cmd(argv);
	free(argv);
	return err;
}

/*
 * RSS with a flow rule: keep every other flow off the bound queues.
 * 0 when changed, 1 when left alone, -1 on failure.
 */
static int rss_exclude_bound(struct server *s)
{
	char q[16];

	if (s->queue >= 1) {
		snprintf(q, sizeof(q), "%d", s->queue);
		return ethtool("-X", s->o->ifname, "equal", q, NULL);
	}
	if (s->o->nqueues >= s->nrxq) {
		fprintf(stderr, "ncdevmem: warning: every RX queue is bound, RSS left alone\n");
		return 1;
	}
	return rss_weights(s, "0", "1");
}

/* "ethtool -N IF flow-type tcp4|tcp6 ... action QUEUE loc 0". */
static int flow_rule_add(struct server *s)
{
	const struct opts *o = s->o;
	char src[INET6_ADDRSTRLEN], dst[INET6_ADDRSTRLEN];
	char sport[8], dport[8], q[16];

	addr_str(&o->cli, src, sizeof(src));
	addr_str(&o->srv, dst, sizeof(dst));
	snprintf(sport, sizeof(sport), "%u", o->cli_port);
	snprintf(dport, sizeof(dport), "%u", o->srv_port);
	snprintf(q, sizeof(q), "%d", s->queue);
	return ethtool("-N", o->ifname,
		       "flow-type", o->family == AF_INET6 ? "tcp6" : "tcp4",
		       "src-ip", src, "dst-ip", dst,
		       "src-port", sport, "dst-port", dport,
		       "action", q, "loc", RULE_LOC, NULL);
}

/* Steer the test flow (or all traffic) to the bound queues. */
static int steering_setup(struct server *s)
{
	int err;

	if (!s->o->cli_port) {
		if (rss_weights(s, "1", "0"))
			return -1;
		s->rss_changed = true;
		return 0;
	}
	/* RSS first: rewriting the whole table could undo the rule */
	err = rss_exclude_bound(s);
	if (err < 0)
		return -1;
	s->rss_changed = !err;
	if (flow_rule_add(s))
		return -1;
	s->rule_added = true;
	return 0;
}

static void steering_restore(struct server *s)
{
	if (s->rule_added)
		ethtool("-N", s->o->ifname, "delete", RULE_LOC, NULL);
	if (s->rss_changed)
		ethtool("-X", s->o->ifname, "default", NULL);
	s->rule_added = false;
	s->rss_changed = false;
}

/* udmabuf of --buf-size bytes, mapped, bound to the queues through netlink. */
static int dmabuf_bind(struct server *s)
{
	char extack[NL_EXTACK_LEN] = "";
	unsigned int *queues;
	int i, err;

	s->dmabuf_fd = udmabuf_create(s->o->buf_size, NULL);
	if (s->dmabuf_fd < 0) {
		fprintf(stderr, "ncdevmem: udmabuf: %s\n",
			strerror(-s->dmabuf_fd));
		return -1;
	}
	err = udmabuf_map(s->dmabuf_fd, s->o->buf_size, &s->map);
	if (err) {
		fprintf(stderr, "ncdevmem: mmap udmabuf: %s\n", strerror(-err));
		return -1;
	}
	err = devmem_nl_open(&s->nl);
	if (err) {
		fprintf(stderr, "ncdevmem: netdev netlink: %s\n",
			strerror(-err));
		return -1;
	}
	s->nl_ready = true;

	queues = calloc(s->o->nqueues, sizeof(*queues));
	if (!queues)
		return -1;
	for (i = 0; i < s->o->nqueues; i++)
		queues[i] = s->queue + i;
	err = devmem_bind_rx(&s->nl, s->ifindex, s->dmabuf_fd, queues,
			     s->o->nqueues, &s->binding_id, extack,
			     sizeof(extack));
	free(queues);
	if (err) {
		fprintf(stderr, "ncdevmem: bind-rx: %s%s%s\n", strerror(-err),
			*extack ? ": " : "", extack);
		return -1;
	}
	fprintf(stderr, "ncdevmem: bound %s RX queues %d..%ld, binding id %u\n",
		s->o->ifname, s->queue, s->queue + s->o->nqueues - 1,
		s->binding_id);
	return 0;
}

/* Listening socket on -s:-p; prints "listening" when it is ready. */
static int server_listen(struct server *s)
{
	const struct opts *o = s->o;
	int one = 1;

	s->listen_fd = socket(o->family,
			      SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (s->listen_fd < 0) {
		perror("ncdevmem: socket");
		return -1;
	}
	if (setsockopt(s->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one,
		       sizeof(one))) {
		perror("ncdevmem: SO_REUSEADDR");
		return -1;
	}
	if (bind(s->listen_fd, (const struct sockaddr *)&o->srv,
		 devmem_addr_len(&o->srv))) {
		perror("ncdevmem: bind");
		return -1;
	}
	if (listen(s->listen_fd, 1)) {
		perror("ncdevmem: listen");
		return -1;
	}
	printf("listening\n");
	fflush(stdout);
	return 0;
}

/* Every setup step, in order; 0 or -1. With -n the NIC is taken as the
 * user set it up.
 */
static int server_setup(struct server *s)
{
	if (server_probe(s))
		return -1;
	if (!s->o->keep_nic_config && (split_enable(s) || steering_setup(s)))
		return -1;
	if (dmabuf_bind(s))
		return -1;
	wait_carrier(s->o->ifname);
	return server_listen(s);
}

/* Accept one connection and stop listening. */
static int server_accept(struct server *s)
{
	struct sockaddr_storage peer;
	socklen_t len = sizeof(peer);
	char buf[INET6_ADDRSTRLEN];

	for (;;) {
		if (wait_readable(s->listen_fd, &s->wait_mask))
			return -1;
		len = sizeof(peer);
		s->fd = accept4(s->listen_fd, (struct sockaddr *)&peer, &len,
				SOCK_CLOEXEC);
		if (s->fd >= 0)
			break;
		if (errno != EAGAIN && errno != EINTR &&
		    errno != ECONNABORTED) {
			perror("ncdevmem: accept");
			return -1;
		}
	}
	close(s->listen_fd);
	s->listen_fd = -1;
	fprintf(stderr, "ncdevmem: connection from %s port %u\n",
		addr_str(&peer, buf, sizeof(buf)), addr_port(&peer));
	return 0;
}

/* Undo everything, in reverse order; safe after a partial setup. */
static void server_cleanup(struct server *s)
{
	if (s->fd >= 0)
		close(s->fd);
	if (s->listen_fd >= 0)
		close(s->listen_fd);
	s->fd = -1;
	s->listen_fd = -1;
	/* closing the netlink socket unbinds the queues */
	if (s->nl_ready)
		nl_close(&s->nl);
	s->nl_ready = false;
	steering_restore(s);
	if (s->map)
		udmabuf_unmap(s->map, s->o->buf_size);
	s->map = NULL;
	if (s->dmabuf_fd >= 0)
		close(s->dmabuf_fd);
	s->dmabuf_fd = -1;
	split_restore(s);
}

/* ---- server: receiving ------------------------------------------------- */

/* Buffers of the receive loop. */
struct rx_bufs {
	unsigned char *iov;	/* RX_IOV_SIZE linear bytes */
	void *ctrl;		/* room for RX_MAX_CMSGS cmsgs */
	size_t ctrl_len;
	__u32 *tokens;		/* tokens of the current recvmsg */
	unsigned int ntokens;
};

/* Check @len stream bytes at @p, the first at stream position @pos. */
static void validate(const unsigned char *p, size_t len,
		     unsigned long long pos, unsigned int n,
		     struct rx_stats *st)
{
	unsigned int k = pos % n;
	size_t i;

	for (i = 0; i < len; i++) {
		if (p[i] != pattern_byte(k, n) &&
		    st->validation_errors++ < MAX_REPORTED_ERRORS)
			fprintf(stderr, "ncdevmem: byte %llu: expected 0x%02x, got 0x%02x\n",
				pos + i, pattern_byte(k, n), p[i]);
		if (++k == n)
			k = 0;
	}
}

/* Drop the first @n tokens of the ranges @r[0..*nr). */
static struct dmabuf_token *tokens_skip(struct dmabuf_token *r, int *nr,
					__u32 n)
{
	while (n && *nr) {
		if (r->token_count <= n) {
			n -= r->token_count;
			r++;
			(*nr)--;
		} else {
			r->token_start += n;
			r->token_count -= n;
			n = 0;
		}
	}
	return r;
}

/* One SO_DEVMEM_DONTNEED batch of @ntok tokens; retried while it frees. */
static int dontneed(int fd, struct dmabuf_token *r, int nr, __u32 ntok,
		    struct rx_stats *st)
{
	int ret;

	while (ntok) {
		ret = setsockopt(fd, SOL_SOCKET, SO_DEVMEM_DONTNEED, r,
				 nr * sizeof(*r));
		st->dontneed_calls++;
		if (ret < 0) {
			perror("ncdevmem: SO_DEVMEM_DONTNEED");
			return -1;
		}
		if (!ret || (__u32)ret > ntok) {
			fprintf(stderr, "ncdevmem: SO_DEVMEM_DONTNEED freed %d of %u tokens\n",
				ret, ntok);
			return -1;
		}
		st->tokens_freed += ret;
		ntok -= ret;
		r = tokens_skip(r, &nr, ret);
	}
	return 0;
}

/*
 * Give back every token of the last recvmsg: consecutive numbers merged
 * into ranges, at most DONTNEED_MAX_RANGES ranges and DONTNEED_MAX_TOKENS
 * tokens per call.
 */
static int tokens_release(int fd, struct rx_bufs *b, struct rx_stats *st)
{
	struct dmabuf_token r[DONTNEED_MAX_RANGES];
	size_t done = 0, used;
	int nr;

	while (done < b->ntokens) {
		nr = devmem_tokens_pack(b->tokens + done, b->ntokens - done, r,
					DONTNEED_MAX_RANGES,
					DONTNEED_MAX_TOKENS, &used);
		if (dontneed(fd, r, nr, used, st))
			return -1;
		done += used;
	}
	b->ntokens = 0;
	return 0;
}

/*
 * Where the bytes of one cmsg are: in the iovec (linear, consumed in
 * order, *@lin_off advanced) or in the udmabuf.  NULL if the cmsg is bad.
 */
static const unsigned char *frag_data(struct server *s, struct rx_bufs *b,
				      const struct cmsghdr *cm,
				      const struct dmabuf_cmsg *dc,
				      size_t *lin_off)
{
	const unsigned char *p;

	if (cm->cmsg_type == SCM_DEVMEM_LINEAR) {
		if (dc->frag_size > RX_IOV_SIZE - *lin_off) {
			fprintf(stderr, "ncdevmem: linear bytes beyond the iovec\n");
			return NULL;
		}
		p = b->iov + *lin_off;
		*lin_off += dc->frag_size;
		return p;
	}
	if (dc->dmabuf_id != s->binding_id) {
		fprintf(stderr, "ncdevmem: fragment of binding %u, ours is %u\n",
			dc->dmabuf_id, s->binding_id);
		return NULL;
	}
	if (dc->frag_offset > s->o->buf_size ||
	    dc->frag_size > s->o->buf_size - dc->frag_offset) {
		fprintf(stderr, "ncdevmem: fragment %llu+%u beyond the dma-buf\n",
			(unsigned long long)dc->frag_offset, dc->frag_size);
		return NULL;
	}
	if (b->ntokens == RX_MAX_CMSGS) {
		fprintf(stderr, "ncdevmem: too many tokens in one recvmsg\n");
		return NULL;
	}
	b->tokens[b->ntokens++] = dc->frag_token;
	return (const unsigned char *)s->map + dc->frag_offset;
}

/* Walk the cmsgs of @msg in stream order; returns the bytes they cover. */
static long long walk_cmsgs(struct server *s, struct rx_bufs *b,
			    struct msghdr *msg, struct rx_stats *st)
{
	unsigned long long pos = st->bytes_total;
	const unsigned char *p;
	struct dmabuf_cmsg dc;
	struct cmsghdr *cm;
	size_t lin_off = 0;

	for (cm = CMSG_FIRSTHDR(msg); cm; cm = CMSG_NXTHDR(msg, cm)) {
		if (devmem_cmsg_get(cm, &dc)) {
			fprintf(stderr, "ncdevmem: unexpected cmsg level %d type %d len %zu\n",
				cm->cmsg_level, cm->cmsg_type,
				(size_t)cm->cmsg_len);
			return -1;
		}
		p = frag_data(s, b, cm, &dc, &lin_off);
		if (!p)
			return -1;
		if (s->o->pattern)
			validate(p, dc.frag_size, pos, s->o->pattern, st);
		if (cm->cmsg_type == SCM_DEVMEM_LINEAR) {
			st->bytes_linear += dc.frag_size;
		} else {
			st->bytes_dmabuf += dc.frag_size;
			st->frags++;
		}
		pos += dc.frag_size;
	}
	return pos - st->bytes_total;
}

/*
 * A recvmsg without any cmsg: the data was in host memory (an skb of a
 * queue that is not bound, the flow missed the steering) and the kernel
 * copied all @len bytes to the iovec.  A call never mixes the two kinds.
 */
static void rx_readable(struct server *s, struct rx_bufs *b, size_t len,
			struct rx_stats *st)
{
	if (!st->bytes_readable)
		fprintf(stderr, "ncdevmem: warning: data in host memory, not in the dma-buf\n");
	if (s->o->pattern)
		validate(b->iov, len, st->bytes_total, s->o->pattern, st);
	st->bytes_readable += len;
	st->bytes_linear += len;
	st->bytes_total += len;
}

/* One recvmsg and its cmsgs: 1 on data, 0 at EOF, -1 on error. */
static int rx_one(struct server *s, struct rx_bufs *b, struct rx_stats *st)
{
	struct iovec iov = { .iov_base = b->iov, .iov_len = RX_IOV_SIZE };
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = b->ctrl,
		.msg_controllen = b->ctrl_len,
	};
	/*
	 * udmabuf pages are host memory the mmap sees coherently; 6.1's
	 * udmabuf also maps its whole sg table for its own device on every
	 * DMA_BUF_IOCTL_SYNC, which DMA-API debug flags (segments beyond
	 * 64 KiB). So syncs are asked for with NCDEVMEM_SYNC=1 only.
	 */
	bool sync = s->o->pattern && getenv("NCDEVMEM_SYNC");
	long long covered;
	ssize_t ret;

	if (wait_readable(s->fd, &s->wait_mask))
		return -1;
	if (ring_ready)
		ret = ring_recvmsg(s->fd, &msg, MSG_SOCK_DEVMEM | MSG_DONTWAIT);
	else
		ret = recvmsg(s->fd, &msg, MSG_SOCK_DEVMEM | MSG_DONTWAIT);
	st->recvmsg_calls++;
	if (ret < 0) {
		if (errno == EAGAIN || errno == EINTR)
			return 1;
		fprintf(stderr, "ncdevmem: recvmsg: %s%s\n", strerror(errno),
			errno == EFAULT ? " (unreadable data without devmem?)" :
			"");
		return -1;
	}
	if (!ret)
		return 0;
	if (msg.msg_flags & MSG_CTRUNC) {
		fprintf(stderr, "ncdevmem: recvmsg: control data truncated\n");
		return -1;
	}
	if (!CMSG_FIRSTHDR(&msg)) {
		rx_readable(s, b, ret, st);
		if (s->o->fail_on_linear) {
			fprintf(stderr, "ncdevmem: %zd bytes came without devmem cmsgs (-L)\n",
				ret);
			return -1;
		}
		return 1;
	}
	if (sync && dmabuf_sync(s->dmabuf_fd, DMA_BUF_SYNC_START |
					      DMA_BUF_SYNC_READ)) {
		perror("ncdevmem: DMA_BUF_SYNC_START");
		return -1;
	}
	covered = walk_cmsgs(s, b, &msg, st);
	if (sync && dmabuf_sync(s->dmabuf_fd, DMA_BUF_SYNC_END |
					      DMA_BUF_SYNC_READ)) {
		perror("ncdevmem: DMA_BUF_SYNC_END");
		return -1;
	}
	if (covered < 0)
		return -1;
	if (covered != ret) {
		fprintf(stderr, "ncdevmem: recvmsg returned %zd, cmsgs cover %lld bytes\n",
			ret, covered);
		return -1;
	}
	st->bytes_total += ret;
	if (tokens_release(s->fd, b, st))
		return -1;
	if (s->o->fail_on_linear && st->bytes_linear) {
		fprintf(stderr, "ncdevmem: %llu payload bytes came in host memory (-L)\n",
			st->bytes_linear);
		return -1;
	}
	return 1;
}

static int rx_bufs_alloc(struct rx_bufs *b)
{
	b->ctrl_len = CMSG_SPACE(sizeof(struct dmabuf_cmsg)) * RX_MAX_CMSGS;
	b->iov = malloc(RX_IOV_SIZE);
	b->ctrl = malloc(b->ctrl_len);
	b->tokens = calloc(RX_MAX_CMSGS, sizeof(*b->tokens));
	b->ntokens = 0;
	return b->iov && b->ctrl && b->tokens ? 0 : -1;
}

static void rx_bufs_free(struct rx_bufs *b)
{
	free(b->iov);
	free(b->ctrl);
	free(b->tokens);
}

/* Receive until EOF; 0 if the stream was received and checked fine. */
static int server_receive(struct server *s, struct rx_stats *st)
{
	struct rx_bufs b;
	double start;
	int ret;

	if (rx_bufs_alloc(&b)) {
		fprintf(stderr, "ncdevmem: out of memory\n");
		rx_bufs_free(&b);
		return -1;
	}
	start = devmem_now_sec();
	do {
		ret = rx_one(s, &b, st);
	} while (ret > 0);
	st->seconds = devmem_now_sec() - start;
	rx_bufs_free(&b);
	if (st->bytes_readable)
		fprintf(stderr, "ncdevmem: warning: %llu of %llu bytes came in host memory\n",
			st->bytes_readable, st->bytes_total);
	if (!ret && st->tokens_freed != st->frags) {
		fprintf(stderr, "ncdevmem: %llu tokens freed for %llu fragments\n",
			st->tokens_freed, st->frags);
		ret = -1;
	}
	return ret || st->validation_errors ? -1 : 0;
}

static void print_rx_stats(const struct rx_stats *st)
{
	printf("bytes_total: %llu\n", st->bytes_total);
	printf("bytes_dmabuf: %llu\n", st->bytes_dmabuf);
	printf("bytes_linear: %llu\n", st->bytes_linear);
	printf("frags: %llu\n", st->frags);
	printf("tokens_freed: %llu\n", st->tokens_freed);
	printf("dontneed_calls: %llu\n", st->dontneed_calls);
	printf("recvmsg_calls: %llu\n", st->recvmsg_calls);
	printf("validation_errors: %llu\n", st->validation_errors);
	printf("seconds: %.3f\n", st->seconds);
	printf("throughput_mbps: %.2f\n",
	       devmem_mbps(st->bytes_total, st->seconds));
	fflush(stdout);
}

static int server_main(const struct opts *o)
{
	struct rx_stats st;
	struct server s;
	int err;

	memset(&s, 0, sizeof(s));
	memset(&st, 0, sizeof(st));
	s.o = o;
	s.dmabuf_fd = -1;
	s.listen_fd = -1;
	s.fd = -1;
	s.saved_split = -1;
	block_signals(&s.wait_mask);

	err = server_setup(&s);
	if (!err)
		err = server_accept(&s);
	if (!err) {
		err = server_receive(&s, &st);
		print_rx_stats(&st);
	}
	server_cleanup(&s);
	return err ? 1 : 0;
}

/* ---- client ------------------------------------------------------------ */

/* A socket bound to -c / --client-port when given, connected to -s:-p; or -1. */
static int client_try_connect(const struct opts *o, int *err)
{
	int fd, one = 1;

	fd = socket(o->family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		*err = errno;
		return -1;
	}
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    ((o->have_cli || o->cli_port) &&
	     bind(fd, (const struct sockaddr *)&o->cli,
		  devmem_addr_len(&o->cli))) ||
	    connect(fd, (const struct sockaddr *)&o->srv,
		    devmem_addr_len(&o->srv))) {
		*err = errno;
		close(fd);
		return -1;
	}
	return fd;
}

/* Connect, retrying for a while as long as the server is not there yet. */
static int client_connect(const struct opts *o)
{
	double deadline = devmem_now_sec() + CONNECT_RETRY_SEC;
	char buf[INET6_ADDRSTRLEN];
	int fd, err = 0;

	for (;;) {
		fd = client_try_connect(o, &err);
		if (fd >= 0)
			return fd;
		if ((err != ECONNREFUSED && err != ENETUNREACH &&
		     err != EHOSTUNREACH) || devmem_now_sec() > deadline)
			break;
		usleep(100000);
	}
	fprintf(stderr, "ncdevmem: connect to %s port %u: %s\n",
		addr_str(&o->srv, buf, sizeof(buf)), o->srv_port,
		strerror(err));
	if (err == EADDRNOTAVAIL && o->cli_port)
		fprintf(stderr, "ncdevmem: (is the 4-tuple in TIME_WAIT?)\n");
	return -1;
}

/* What the client did, for its summary. */
struct tx_stats {
	unsigned long long bytes_sent;
	unsigned long long bytes_devmem;	/* sent from the udmabuf */
	unsigned long long calls;		/* calls that queued bytes */
	unsigned long long zc_completed;	/* calls reported complete */
	struct ring_notifs notifs;		/* --io-uring's instead */
	unsigned long long zc_copied;		/* of those, reported copied */
	unsigned long long enobufs;		/* sendmsg retried after ENOBUFS */
};

static int send_all(int fd, const unsigned char *p, size_t len,
		    struct tx_stats *st)
{
	ssize_t n;

	while (len) {
		n = send(fd, p, len, MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			perror("ncdevmem: send");
			return -1;
		}
		st->calls++;
		st->bytes_sent += n;
		p += n;
		len -= n;
	}
	return 0;
}

/* Read up to @len bytes of standard input into @p: the count, 0 at EOF,
 * -1 on error.
 */
static ssize_t read_stdin(unsigned char *p, size_t len)
{
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		n = read(STDIN_FILENO, p + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			perror("ncdevmem: read standard input");
			return -1;
		}
		if (!n)
			break;
		done += n;
	}
	return done;
}

/* Standard input, in reads of up to -z bytes, until EOF. */
static int send_stdin(int fd, unsigned char *buf, size_t chunk,
		      struct tx_stats *st)
{
	ssize_t n;

	for (;;) {
		n = read_stdin(buf, chunk);
		if (n <= 0)
			return n;
		if (send_all(fd, buf, n, st))
			return -1;
	}
}

/* Send --bytes of the pattern (zeros without -v), or standard input, in
 * -z sized chunks.
 */
static int send_stream(int fd, const struct opts *o, struct tx_stats *st)
{
	unsigned long long pos = 0, phase = ULLONG_MAX;
	unsigned char *buf;
	size_t len;
	int err = 0;

	buf = calloc(1, o->chunk);
	if (!buf) {
		fprintf(stderr, "ncdevmem: out of memory\n");
		return -1;
	}
	if (o->from_stdin) {
		err = send_stdin(fd, buf, o->chunk, st);
		free(buf);
		return err;
	}
	while (pos < o->send_bytes && !err) {
		len = o->send_bytes - pos < o->chunk ?
		      o->send_bytes - pos : o->chunk;
		/* refill only when the chunk starts at another phase */
		if (o->pattern && pos % o->pattern != phase) {
			phase = pos % o->pattern;
			pattern_fill(buf, o->chunk, phase, o->pattern);
		}
		err = send_all(fd, buf, len, st);
		pos += len;
	}
	free(buf);
	return err;
}

/* ---- client: devmem TX ------------------------------------------------- */

struct devmem_tx {
	const struct opts *o;
	int ifindex;
	int dmabuf_fd;
	void *map;
	struct nl_ctx nl;
	bool nl_ready;
	__u32 binding_id;
	/* stream position i is sent from udmabuf offset i % wrap */
	unsigned long long wrap;
};

/*
 * Fill the whole udmabuf with the -v pattern, zeros without it.  One
 * period is written byte by byte, then the filled part (always a whole
 * number of periods) is doubled with memcpy().
 */
static void tx_fill(struct devmem_tx *t)
{
	size_t len = t->o->buf_size, done, n;
	unsigned char *p = t->map;

	if (!t->o->pattern) {
		memset(p, 0, len);
		return;
	}
	done = len < t->o->pattern ? len : t->o->pattern;
	pattern_fill(p, done, 0, t->o->pattern);
	while (done < len) {
		n = len - done < done ? len - done : done;
		memcpy(p + done, p, n);
		done += n;
	}
}

/* udmabuf of --buf-size bytes, filled, bound for TX on -f through netlink. */
static int tx_setup(struct devmem_tx *t)
{
	const struct opts *o = t->o;
	char extack[NL_EXTACK_LEN] = "";
	/* CPU access brackets only on demand, as in rx_one() */
	bool sync = getenv("NCDEVMEM_SYNC");
	int err;

	t->ifindex = devmem_ifindex(o->ifname);
	if (t->ifindex < 0) {
		fprintf(stderr, "ncdevmem: %s: %s\n", o->ifname,
			strerror(-t->ifindex));
		return -1;
	}
	/* standard input fills the udmabuf from offset 0 each time */
	t->wrap = o->pattern && !o->from_stdin ?
		  o->buf_size / o->pattern * o->pattern : o->buf_size;
	t->dmabuf_fd = udmabuf_create(o->buf_size, NULL);
	if (t->dmabuf_fd < 0) {
		fprintf(stderr, "ncdevmem: udmabuf: %s\n",
			strerror(-t->dmabuf_fd));
		return -1;
	}
	err = udmabuf_map(t->dmabuf_fd, o->buf_size, &t->map);
	if (err) {
		t->map = NULL;
		fprintf(stderr, "ncdevmem: mmap udmabuf: %s\n", strerror(-err));
		return -1;
	}
	if (sync && dmabuf_sync(t->dmabuf_fd, DMA_BUF_SYNC_START |
					      DMA_BUF_SYNC_WRITE)) {
		perror("ncdevmem: DMA_BUF_SYNC_START");
		return -1;
	}
	if (!o->from_stdin)
		tx_fill(t);
	if (sync && dmabuf_sync(t->dmabuf_fd, DMA_BUF_SYNC_END |
					      DMA_BUF_SYNC_WRITE)) {
		perror("ncdevmem: DMA_BUF_SYNC_END");
		return -1;
	}

	err = devmem_nl_open(&t->nl);
	if (err) {
		fprintf(stderr, "ncdevmem: netdev netlink: %s\n",
			strerror(-err));
		return -1;
	}
	t->nl_ready = true;
	err = devmem_bind_tx(&t->nl, t->ifindex, t->dmabuf_fd,
			     &t->binding_id, extack, sizeof(extack));
	if (err) {
		fprintf(stderr, "ncdevmem: bind-tx: %s%s%s\n", strerror(-err),
			*extack ? ": " : "", extack);
		return -1;
	}
	fprintf(stderr, "ncdevmem: bound %s for TX, binding id %u\n",
		o->ifname, t->binding_id);
	fprintf(stderr, "ncdevmem: udmabuf %llu bytes, wraps at %llu, %u iovec(s) per call\n",
		o->buf_size, t->wrap, o->niov);
	return 0;
}

/* Unmap and close the udmabuf; the netlink socket (the binding) last. */
static void tx_cleanup(struct devmem_tx *t)
{
	if (t->map)
		udmabuf_unmap(t->map, t->o->buf_size);
	t->map = NULL;
	if (t->dmabuf_fd >= 0)
		close(t->dmabuf_fd);
	t->dmabuf_fd = -1;
	if (t->nl_ready)
		nl_close(&t->nl);
	t->nl_ready = false;
}

/*
 * Read one message of the error queue: a MSG_ZEROCOPY notification for
 * the calls ee_info..ee_data (inclusive; the kernel merges consecutive
 * ranges into one message).  Returns the number of calls it completes, 0
 * when the queue is empty, or -1 on anything unexpected.
 */
/* ---- client: MSG_ZEROCOPY completions ------------------------------------ */

static long long zc_read_one(int fd, struct tx_stats *st)
{
	union {
		char buf[ZC_CTRL_LEN];
		struct cmsghdr align;
	} ctrl;
	struct msghdr msg = {
		.msg_control = ctrl.buf,
		.msg_controllen = sizeof(ctrl.buf),
	};
	struct sock_extended_err ee;
	struct cmsghdr *cm;
	bool found = false;
	__u32 count;

	if (recvmsg(fd, &msg, MSG_ERRQUEUE | MSG_DONTWAIT) < 0) {
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
			return 0;
		perror("ncdevmem: recvmsg(MSG_ERRQUEUE)");
		return -1;
	}
	if (msg.msg_flags & MSG_CTRUNC) {
		fprintf(stderr, "ncdevmem: error queue: control data truncated\n");
		return -1;
	}
	for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
		if ((cm->cmsg_level != SOL_IP || cm->cmsg_type != IP_RECVERR) &&
		    (cm->cmsg_level != SOL_IPV6 ||
		     cm->cmsg_type != IPV6_RECVERR))
			continue;
		if (cm->cmsg_len < CMSG_LEN(sizeof(ee))) {
			fprintf(stderr, "ncdevmem: error queue: short cmsg (%zu bytes)\n",
				(size_t)cm->cmsg_len);
			return -1;
		}
		memcpy(&ee, CMSG_DATA(cm), sizeof(ee));
		found = true;
		break;
	}
	if (!found) {
		fprintf(stderr, "ncdevmem: error queue: no IP_RECVERR / IPV6_RECVERR\n");
		return -1;
	}
	if (ee.ee_origin != SO_EE_ORIGIN_ZEROCOPY || ee.ee_errno) {
		fprintf(stderr, "ncdevmem: error queue: origin %u, errno %u (%s)\n",
			ee.ee_origin, ee.ee_errno, strerror(ee.ee_errno));
		return -1;
	}
	count = ee.ee_data - ee.ee_info + 1;
	if (!count || count > st->calls - st->zc_completed) {
		fprintf(stderr, "ncdevmem: completion of calls %u..%u, %llu of %llu outstanding\n",
			ee.ee_info, ee.ee_data, st->calls - st->zc_completed,
			st->calls);
		return -1;
	}
	st->zc_completed += count;
	if (ee.ee_code & SO_EE_CODE_ZEROCOPY_COPIED)
		st->zc_copied += count;
	return count;
}

/* Empty the error queue without waiting: calls completed, or -1. */
static long long zc_reap(int fd, struct tx_stats *st)
{
	unsigned long long before = st->zc_completed;
	long long n, total = 0;

	if (ring_ready) {
		ring_reap(&st->notifs, 0);
		st->zc_completed = st->notifs.seen;
		return st->zc_completed - before;
	}
	do {
		n = zc_read_one(fd, st);
		if (n < 0)
			return -1;
		total += n;
	} while (n);
	return total;
}

/* --io-uring: wait up to @secs seconds for every announced notification. */
static int zc_wait_ring(struct tx_stats *st, int secs)
{
	double deadline = devmem_now_sec() + secs;

	while (st->notifs.pending > 0) {
		if (devmem_now_sec() > deadline) {
			fprintf(stderr, "ncdevmem: %lld notifications missing after %d s\n",
				st->notifs.pending, secs);
			return -1;
		}
		ring_reap(&st->notifs, 100);
	}
	st->zc_completed = st->notifs.seen;
	return 0;
}

/*
 * Wait up to @secs seconds until at least @target calls are complete
 * (the error queue raises POLLERR).  0, or -1 on timeout or error.
 */
static int zc_wait(int fd, struct tx_stats *st, unsigned long long target,
		   int secs)
{
	double deadline = devmem_now_sec() + secs, left;
	struct pollfd pfd = { .fd = fd };
	socklen_t len;
	long long n;
	int err;

	if (ring_ready)
		return zc_wait_ring(st, secs);

	while (st->zc_completed < target) {
		left = deadline - devmem_now_sec();
		if (left <= 0) {
			fprintf(stderr, "ncdevmem: %llu of %llu calls not completed after %d s\n",
				st->calls - st->zc_completed, st->calls, secs);
			return -1;
		}
		/* no events: POLLERR, POLLHUP and POLLNVAL come anyway */
		pfd.events = 0;
		pfd.revents = 0;
		if (poll(&pfd, 1, (int)(left * 1000) + 1) < 0) {
			if (errno == EINTR)
				continue;
			perror("ncdevmem: poll");
			return -1;
		}
		n = zc_reap(fd, st);
		if (n < 0)
			return -1;
		if (n || !pfd.revents)
			continue;
		/* woken up, nothing on the error queue: did the socket fail? */
		err = 0;
		len = sizeof(err);
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len))
			err = errno;
		if (err || (pfd.revents & (POLLHUP | POLLNVAL))) {
			fprintf(stderr, "ncdevmem: connection lost, %llu calls not completed: %s\n",
				st->calls - st->zc_completed,
				err ? strerror(err) : "closed");
			return -1;
		}
	}
	return 0;
}

/* The devmem sendmsg of @iov as io_uring's sendmsg_zc. */
static ssize_t tx_ring_sendmsg(int fd, const struct devmem_tx *t,
			       struct iovec *iov, unsigned int n,
			       struct tx_stats *st)
{
	union {
		char buf[CMSG_SPACE(sizeof(__u32))];
		struct cmsghdr align;
	} ctrl = {};
	struct msghdr msg = {
		.msg_iov = iov,
		.msg_iovlen = n,
		.msg_control = ctrl.buf,
		.msg_controllen = sizeof(ctrl.buf),
	};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_DEVMEM_DMABUF;
	cm->cmsg_len = CMSG_LEN(sizeof(t->binding_id));
	memcpy(CMSG_DATA(cm), &t->binding_id, sizeof(t->binding_id));
	ssize_t ret = ring_sendmsg_zc(fd, &msg, &st->notifs);

	st->zc_completed = st->notifs.seen;
	return ret;
}

/*
 * One sendmsg(MSG_ZEROCOPY) of the @len bytes at udmabuf offset @off, in
 * up to --iovecs contiguous iovecs of nearly equal length.
 */
static ssize_t tx_sendmsg(int fd, const struct devmem_tx *t,
			  unsigned long long off, size_t len,
			  struct tx_stats *st)
{
	struct iovec iov[MAX_TX_IOVECS];
	size_t piece, extra;
	unsigned int i, n;
	ssize_t ret;

	n = len < t->o->niov ? len : t->o->niov;
	piece = len / n;
	extra = len % n;
	for (i = 0; i < n; i++) {
		/* an offset into the dma-buf, not an address */
		iov[i].iov_base = (void *)(uintptr_t)off;
		iov[i].iov_len = piece + (i < extra);
		off += iov[i].iov_len;
	}
	if (ring_ready)
		return tx_ring_sendmsg(fd, t, iov, n, st);
	ret = devmem_sendmsg(fd, t->binding_id, iov, n,
			     MSG_ZEROCOPY | MSG_NOSIGNAL);
	if (ret < 0) {
		errno = -ret;
		return -1;
	}
	return ret;
}

static void tx_send_error(const struct devmem_tx *t, int err,
			  unsigned long long off, size_t len)
{
	const char *hint = "";

	switch (err) {
	case EINVAL:
		hint = " (no devmem TX in this kernel, or the binding is gone?)";
		break;
	case ENODEV:
		hint = " (the route to the server does not go through -f)";
		break;
	case EFAULT:
		hint = " (offset beyond the dma-buf?)";
		break;
	case EOPNOTSUPP:
		hint = " (the route's device cannot send fragments?)";
		break;
	}
	fprintf(stderr, "ncdevmem: sendmsg of %zu bytes at offset %llu, binding %u: %s%s\n",
		len, off, t->binding_id, strerror(err), hint);
}

/*
 * sendmsg said ENOBUFS: the socket's option memory, which holds the
 * notifications in flight and unread, is full.  Wait for a completion,
 * or a moment if none is outstanding; -1 once that lasted ZC_WAIT_SEC.
 */
static int tx_enobufs(int fd, struct tx_stats *st, double *since)
{
	double now = devmem_now_sec();

	st->enobufs++;
	if (!*since)
		*since = now;
	if (now - *since > ZC_WAIT_SEC) {
		fprintf(stderr, "ncdevmem: sendmsg: %s for %d s\n",
			strerror(ENOBUFS), ZC_WAIT_SEC);
		return -1;
	}
	if (st->zc_completed < st->calls)
		return zc_wait(fd, st, st->zc_completed + 1, ZC_WAIT_SEC);
	usleep(1000);
	return 0;
}

/*
 * Send stream positions [@pos, @end) from the udmabuf: position i from
 * offset i % wrap, in calls of up to -z bytes that never cross the wrap.
 */
static int tx_send_range(int fd, struct devmem_tx *t, struct tx_stats *st,
			 unsigned long long pos, unsigned long long end)
{
	const struct opts *o = t->o;
	unsigned long long off, len;
	double enobufs_since = 0;
	ssize_t ret;

	while (pos < end) {
		off = pos % t->wrap;
		len = end - pos;
		if (len > o->chunk)
			len = o->chunk;
		if (len > t->wrap - off)
			len = t->wrap - off;
		ret = tx_sendmsg(fd, t, off, len, st);
		if (ret < 0 && errno == EINTR)
			continue;
		if (ret < 0 && errno == ENOBUFS) {
			if (tx_enobufs(fd, st, &enobufs_since))
				return -1;
			continue;
		}
		if (ret <= 0 || (unsigned long long)ret > len) {
			if (ret < 0)
				tx_send_error(t, errno, off, len);
			else
				fprintf(stderr, "ncdevmem: sendmsg of %llu bytes returned %zd\n",
					len, ret);
			return -1;
		}
		enobufs_since = 0;
		/* the kernel numbered this call st->calls */
		st->calls++;
		st->bytes_sent += ret;
		st->bytes_devmem += ret;
		pos += ret;
		if (zc_reap(fd, st) < 0)
			return -1;
	}
	return 0;
}

/*
 * Standard input through the udmabuf, as mainline's client does: fill it,
 * send it, wait until the NIC has read all of it, and again until EOF.
 */
static int tx_send_stdin(int fd, struct devmem_tx *t, struct tx_stats *st)
{
	/* CPU access brackets only on demand, as in tx_setup() */
	bool sync = getenv("NCDEVMEM_SYNC");
	ssize_t n;

	for (;;) {
		if (sync && dmabuf_sync(t->dmabuf_fd, DMA_BUF_SYNC_START |
						      DMA_BUF_SYNC_WRITE)) {
			perror("ncdevmem: DMA_BUF_SYNC_START");
			return -1;
		}
		n = read_stdin(t->map, t->o->buf_size);
		if (sync && dmabuf_sync(t->dmabuf_fd, DMA_BUF_SYNC_END |
						      DMA_BUF_SYNC_WRITE)) {
			perror("ncdevmem: DMA_BUF_SYNC_END");
			return -1;
		}
		if (n <= 0)
			return n;
		if (tx_send_range(fd, t, st, 0, n) ||
		    zc_wait(fd, st, st->calls, ZC_WAIT_SEC))
			return -1;
	}
}

/* The whole stream from the udmabuf: --bytes of the pattern, or standard
 * input.
 */
static int send_stream_devmem(int fd, struct devmem_tx *t,
			      struct tx_stats *st)
{
	int one = 1;
	int err;

	/* io_uring's sendmsg_zc brings its own completions */
	if (!ring_ready &&
	    setsockopt(fd, SOL_SOCKET, SO_ZEROCOPY, &one, sizeof(one))) {
		perror("ncdevmem: SO_ZEROCOPY");
		return -1;
	}
	if (t->o->from_stdin)
		err = tx_send_stdin(fd, t, st);
	else
		err = tx_send_range(fd, t, st, 0, t->o->send_bytes);
	if (err)
		return -1;
	if (st->enobufs)
		fprintf(stderr, "ncdevmem: %llu sendmsg calls waited for completions (ENOBUFS)\n",
			st->enobufs);
	return zc_wait(fd, st, st->calls, ZC_WAIT_SEC);
}

/* ---- client: main ------------------------------------------------------ */

/* After SHUT_WR: read (and drop) until the server closes. */
static int wait_close(int fd)
{
	char buf[4096];
	ssize_t n;

	do {
		n = read(fd, buf, sizeof(buf));
	} while (n > 0 || (n < 0 && errno == EINTR));
	if (n < 0) {
		perror("ncdevmem: waiting for the server to close");
		return -1;
	}
	return 0;
}

static void print_tx_stats(const struct tx_stats *st, double secs)
{
	printf("bytes_sent: %llu\n", st->bytes_sent);
	printf("bytes_devmem_tx: %llu\n", st->bytes_devmem);
	printf("sendmsg_calls: %llu\n", st->calls);
	printf("zc_completions: %llu\n", st->zc_completed);
	printf("zc_copied: %llu\n", st->zc_copied);
	printf("seconds: %.3f\n", secs);
	printf("throughput_mbps: %.2f\n", devmem_mbps(st->bytes_sent, secs));
	fflush(stdout);
}

static int client_main(const struct opts *o)
{
	struct tx_stats st;
	struct devmem_tx t;
	double start, secs;
	int fd, err;

	memset(&st, 0, sizeof(st));
	memset(&t, 0, sizeof(t));
	t.o = o;
	t.dmabuf_fd = -1;

	/* the udmabuf is filled and bound before the clock starts */
	if (o->ifname && tx_setup(&t)) {
		tx_cleanup(&t);
		return 1;
	}
	fd = client_connect(o);
	if (fd < 0) {
		tx_cleanup(&t);
		return 1;
	}
	start = devmem_now_sec();
	if (o->ifname)
		err = send_stream_devmem(fd, &t, &st);
	else
		err = send_stream(fd, o, &st);
	if (!err && shutdown(fd, SHUT_WR)) {
		perror("ncdevmem: shutdown");
		err = -1;
	}
	if (!err)
		err = wait_close(fd);
	secs = devmem_now_sec() - start;
	close(fd);
	tx_cleanup(&t);
	if (err)
		return 1;
	if (st.zc_copied)
		fprintf(stderr, "ncdevmem: warning: %llu of %llu calls reported copied\n",
			st.zc_copied, st.zc_completed);
	print_tx_stats(&st, secs);
	return 0;
}

/* ---- self-test (-f alone) ---------------------------------------------- */

/* One check of the self-test: prints it, returns 0 when it held. */
static int selftest_check(bool held, const char *what, int err,
			  const char *extack)
{
	fprintf(stderr, "ncdevmem: self-test: %s: %s (%s%s%s)\n", what,
		held ? "ok" : "FAILED", err ? strerror(-err) : "success",
		extack && *extack ? ": " : "", extack ? extack : "");
	return held ? 0 : 1;
}

/* bind-rx of @queues (none when @n is 0) on a fresh netlink socket; the
 * binding, if any, lives while *@nl is open.
 */
static int selftest_bind(struct nl_ctx *nl, int ifindex, int dmabuf,
			 const unsigned int *queues, int n, char *extack)
{
	int err;

	*extack = 0;
	err = devmem_nl_open(nl);
	if (err) {
		snprintf(extack, NL_EXTACK_LEN, "netdev netlink: %s",
			 strerror(-err));
		/* not the answer of the kernel we are testing */
		return -ENOPROTOOPT;
	}
	return devmem_bind_rx(nl, ifindex, dmabuf, queues, n, NULL, extack,
			      NL_EXTACK_LEN);
}

/* While @queue is bound, shrinking the channels below it is refused and
 * leaves them as they were.
 */
static int selftest_shrink(struct server *s)
{
	char count[16];
	int err, failed;

	snprintf(count, sizeof(count), "%d", s->queue);
	err = ethtool("-L", s->o->ifname, "combined", count, NULL);
	failed = selftest_check(err && devmem_rx_queue_count(s->o->ifname) ==
				s->nrxq,
				"channels cannot shrink under a bound queue",
				0, NULL);
	if (!err) {
		snprintf(count, sizeof(count), "%d", s->nrxq);
		ethtool("-L", s->o->ifname, "combined", count, NULL);
	}
	return failed;
}

/*
 * What mainline's ncdevmem checks when given only -f: a bind without
 * queues is refused, so is a bind with header split off, a bind of the
 * last RX queue with header split on works, and the channels cannot shrink
 * under it. The NIC is put back as it was (split_restore() waits for the
 * unbind).
 */
static int selftest_main(const struct opts *o)
{
	struct server s = {
		.o = o, .dmabuf_fd = -1, .listen_fd = -1, .fd = -1,
	};
	char extack[NL_EXTACK_LEN];
	unsigned int queue;
	struct nl_ctx nl;
	int err, failed = 0;

	if (server_probe(&s))
		return 1;
	queue = s.queue;
	s.dmabuf_fd = udmabuf_create(o->buf_size, NULL);
	if (s.dmabuf_fd < 0) {
		fprintf(stderr, "ncdevmem: udmabuf: %s\n", strerror(-s.dmabuf_fd));
		return 1;
	}

	err = selftest_bind(&nl, s.ifindex, s.dmabuf_fd, NULL, 0, extack);
	failed += selftest_check(err == -EINVAL, "bind without queues refused",
				 err, extack);
	nl_close(&nl);

	err = ethtool_set_tcp_data_split(s.ifindex, false, extack,
					 sizeof(extack));
	if (!err)
		err = selftest_bind(&nl, s.ifindex, s.dmabuf_fd, &queue, 1,
				    extack);
	failed += selftest_check(err == -EINVAL,
				 "bind with header split off refused", err,
				 extack);
	nl_close(&nl);

	err = split_enable(&s) ? -EIO : 0;
	if (!err)
		err = selftest_bind(&nl, s.ifindex, s.dmabuf_fd, &queue, 1,
				    extack);
	failed += selftest_check(!err, "bind with header split on", err,
				 extack);
	if (!err && s.nrxq > 1)
		failed += selftest_shrink(&s);
	nl_close(&nl);

	split_restore(&s);
	if (s.saved_split == ETHTOOL_TCP_DATA_SPLIT_ENABLED &&
	    ethtool_get_tcp_data_split(s.ifindex) != s.saved_split)
		failed += selftest_check(false, "tcp-data-split put back", 0,
					 NULL);
	close(s.dmabuf_fd);
	printf("selftest_failures: %d\n", failed);
	return failed ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct opts o;
	int ret;

	ret = parse_opts(argc, argv, &o);
	if (ret) {
		print_help(ret > 0 ? stdout : stderr);
		return ret > 0 ? 0 : 2;
	}
	if (o.selftest)
		return selftest_main(&o);
	if (o.io_uring && ring_setup())
		return 1;
	ret = o.server ? server_main(&o) : client_main(&o);
	ring_cleanup();
	return ret;
}
