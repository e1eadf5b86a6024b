// SPDX-License-Identifier: GPL-2.0
/*
 * nccl-devmem-helper: binds RX regions and steers flows for jobs without
 * CAP_NET_ADMIN (the plugin asks it when bind-rx says EPERM and
 * NCCL_DEVMEM_HELPER names its socket).  Started by the administrator, as
 * root, in the network namespace it serves:
 *
 *   nccl-devmem-helper -s PATH -g GROUP -i IF=QUEUES[,shared-buckets]...
 *                      [-r RULES] [-c CONNS] [-v]
 *
 * Who: the socket is root:GROUP 0660, and a caller whose SO_PEERCRED is
 * not root and not in GROUP (primary or supplementary) is refused even
 * where the file's mode lets it in.
 *
 * What, per connection (helper_proto.h): one binding, of a dma-buf the
 * caller sends, on queues the administrator gave that interface (-i), and
 * not on a queue the RSS table or an ntuple rule already sends traffic to
 * (other users' flows would land in the caller's memory).  The binding is
 * the helper's (its netlink socket is not handed over): it goes when the
 * connection closes.  Rules only for connected TCP sockets the caller
 * sends, in this network namespace, only to the queues of that
 * connection's binding.  The flow is read from the socket once and kept:
 * the rule is added, checked, and deleted by that flow, whatever the
 * caller does to the socket later.  The helper keeps each steered socket
 * open (its 4-tuple cannot be taken by anyone else) and checks every
 * second that it is still connected to that flow, deleting the rule of
 * one that is not.  On igb a rule moves a whole RSS bucket, other users'
 * flows included: such an interface is refused unless the administrator
 * says ",shared-buckets"; a driver it cannot name is refused too.
 *
 * How much: at most RULES rules (-r, default 16) and CONNS connections
 * (-c, default 8) per user; a refused connection gets its reason and is
 * closed at once.  A reply the caller does not read ends its connection.
 * Only sockets and dma-bufs are accepted as fds (told apart without
 * fstat(), which a FUSE file's owner could make wait): anything else goes
 * to a reaper thread to be closed, and its sender is refused for a minute,
 * its other connections dropped.  TCP sockets are closed here with
 * SO_LINGER off and dma-bufs here; every other socket, the clients' own
 * included (files queued unread in it are released with it: a lingering
 * TCP socket's close waits), goes to the reaper.  A socket bound to a
 * device (SO_BINDTODEVICE) is not steered, and a rule's is swept: it does
 * not keep its 4-tuple from an unbound socket.  Rules the helper could not
 * delete when their connection closed are retried by the sweep.  Everything a connection made
 * is undone when it closes, whatever the caller's state; SIGTERM, SIGINT,
 * SIGHUP and SIGQUIT undo everything and stop.  bind-rx may take as long
 * as the NIC's queue restart (seconds); the other requests are ethtool
 * calls and the steering lock, tried for 20 ms at most.
 *
 * One thread, poll(), owns the client table and the bans; the reaper
 * thread only reads fds from its pipe and closes them.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "helper_proto.h"
#include "plugin.h"

#define MAX_CLIENTS 256
#define MAX_IFS 8
#define MAX_RULES_PER_CONN 64
#define MAX_FDS_IN 253		/* SCM_MAX_FD: none is dropped (and released) in recvmsg */
#define SWEEP_MS 1000
#define BAN_MS 60000		/* a sender of an fd of unknown type is refused */
#define MAX_BANS 64
#define MAX_ORPHANS 64
#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71
#endif

/* drivers whose ntuple rules move the flow's RSS bucket, not the flow */
static const char *const bucket_drivers[] = { "igb" };

struct iface {
	char name[IF_NAMESIZE];
	unsigned queues[DM_HELPER_MAX_QUEUES];
	int nqueues;
	int shared_buckets;
};

struct rule {
	int fd;			/* the steered socket, kept open (-1: swept) */
	int loc;		/* swept: -1 - loc, for the caller's unsteer */
	unsigned queue;
	struct sockaddr_storage local, peer;	/* the flow, as steered */
};

struct client {
	int fd;
	uid_t uid;
	pid_t pid;
	/* the binding (nl.fd < 0: none) */
	struct dm_nl nl;
	const struct iface *ifc;
	int ifindex;
	uint32_t id;
	unsigned queues[DM_HELPER_MAX_QUEUES];
	int nqueues;
	struct rule rules[MAX_RULES_PER_CONN];
	int nrules;
};

struct helper {
	const char *path;
	gid_t gid;
	struct iface ifs[MAX_IFS];
	int nifs;
	int max_rules, max_conns;
	int verbose;
	uint64_t netns;
	int lfd;
	int reap_fd;		/* write end of the reaper's pipe */
	/* rules of closed connections not deleted yet: the sweep retries */
	struct orphan {
		char ifname[IF_NAMESIZE];
		int loc;
		struct sockaddr_storage local, peer;
	} orphans[MAX_ORPHANS];
	int norphans;
	struct client *clients[MAX_CLIENTS];
	struct {
		uid_t uid;
		uint64_t until;
	} bans[MAX_BANS];
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logf_(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("nccl-devmem-helper: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: nccl-devmem-helper -s SOCKET -g GROUP -i IF=Q[-Q][,shared-buckets] [-i ...]\n"
		"                          [-r RULES_PER_USER] [-c CONNS_PER_USER] [-v]\n");
	exit(2);
}

static int parse_if(struct helper *h, char *arg)
{
	struct iface *f;
	char *eq = strchr(arg, '='), *opt, *end;
	long a, b;

	if (!eq || h->nifs == MAX_IFS || eq == arg || eq - arg >= IF_NAMESIZE)
		return -1;
	f = &h->ifs[h->nifs];
	memset(f, 0, sizeof(*f));
	memcpy(f->name, arg, (size_t)(eq - arg));
	opt = strchr(eq + 1, ',');
	if (opt) {
		*opt++ = 0;
		if (strcmp(opt, "shared-buckets"))
			return -1;
		f->shared_buckets = 1;
	}
	a = strtol(eq + 1, &end, 10);
	if (end == eq + 1 || a < 0)
		return -1;
	b = a;
	if (*end == '-') {
		char *s = end + 1;

		b = strtol(s, &end, 10);
		if (end == s)
			return -1;
	}
	if (*end || b < a || b - a + 1 > DM_HELPER_MAX_QUEUES || b > INT_MAX)
		return -1;
	for (; a <= b; a++)
		f->queues[f->nqueues++] = (unsigned)a;
	h->nifs++;
	return 0;
}

static int parse_int(const char *s, int min, int max)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (!*s || *end || v < min || v > max)
		usage();
	return (int)v;
}

static uint64_t netns_cookie(int fd)
{
	uint64_t c = 0;
	socklen_t l = sizeof(c);

	if (getsockopt(fd, SOL_SOCKET, SO_NETNS_COOKIE, &c, &l))
		return 0;
	return c;
}

/* ------------------------------------------------------------ replies */

static int reply(int fd, const struct client *c, const struct dm_helper_req *q, int err,
		 uint32_t id, int loc, const char *fmt, ...) __attribute__((format(printf, 7, 8)));
/* Sends a reply on fd (c: the client, for the log; q: the request, NULL
 * for a refusal before any); -1 when the caller does not take it. */
static int reply(int fd, const struct client *c, const struct dm_helper_req *q, int err,
		 uint32_t id, int loc, const char *fmt, ...)
{
	struct dm_helper_rep r;
	va_list ap;

	memset(&r, 0, sizeof(r));
	r.magic = DM_HELPER_MAGIC;
	r.version = DM_HELPER_VERSION;
	r.op = q ? q->op : 0;
	r.err = err;
	r.id = id;
	r.loc = loc;
	if (fmt) {
		va_start(ap, fmt);
		vsnprintf(r.why, sizeof(r.why), fmt, ap);
		va_end(ap);
	}
	if (err && c)
		logf_("uid %u pid %d: op %u refused: %s (%s)", (unsigned)c->uid, (int)c->pid,
		      (unsigned)r.op, r.why, strerror(-err));
	/* a caller that does not read its replies loses its connection */
	if (send(fd, &r, sizeof(r), MSG_DONTWAIT | MSG_NOSIGNAL) != (ssize_t)sizeof(r))
		return -1;
	return 0;
}

/* ------------------------------------------------------------ the fds */

/* What an fd is, found without touching the file's owner (no fstat:
 * a FUSE file's may wait on its daemon). */
enum { FD_OTHER, FD_SOCKET, FD_TCP, FD_DMABUF };

static int fd_kind(int fd)
{
	char path[64], buf[512];
	int v = 0, p = 0, f;
	socklen_t l = sizeof(v);
	ssize_t n;

	if (!getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &v, &l)) {
		l = sizeof(p);
		getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &p, &l);
		return (v == AF_INET || v == AF_INET6) && p == IPPROTO_TCP ? FD_TCP : FD_SOCKET;
	}
	if (errno != ENOTSOCK)
		return FD_OTHER;
	/* only a dma-buf's fdinfo has an exporter's name */
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = open(path, O_RDONLY | O_CLOEXEC);
	if (f < 0)
		return FD_OTHER;
	n = read(f, buf, sizeof(buf) - 1);
	close(f);
	if (n <= 0)
		return FD_OTHER;
	buf[n] = 0;
	return strstr(buf, "\nexp_name:") ? FD_DMABUF : FD_OTHER;
}

static void *reaper(void *arg)
{
	int pfd = (int)(intptr_t)arg, fd;

	while (read(pfd, &fd, sizeof(fd)) == (ssize_t)sizeof(fd))
		close(fd);	/* may wait on whoever serves the file */
	return NULL;
}

/* Closes fd in the reaper thread: a file whose close may wait (FUSE, a
 * Unix socket with files queued in it, whose release may be a lingering
 * TCP socket's). */
static void to_reaper(const struct helper *h, int fd)
{
	if (fd >= 0 && write(h->reap_fd, &fd, sizeof(fd)) != (ssize_t)sizeof(fd))
		logf_("the reaper is behind: fd %d left open", fd);
}

/* Closes an fd of the given kind: a TCP socket with SO_LINGER off (the
 * caller's to set, so that close() would wait) and a dma-buf here, the
 * rest in the reaper. */
static void dispose(const struct helper *h, int fd, int kind)
{
	struct linger off = { 0, 0 };

	if (fd < 0)
		return;
	if (kind == FD_TCP)
		setsockopt(fd, SOL_SOCKET, SO_LINGER, &off, sizeof(off));
	if (kind == FD_TCP || kind == FD_DMABUF)
		close(fd);
	else
		to_reaper(h, fd);
}

static int banned(const struct helper *h, uid_t uid, uint64_t now)
{
	int i;

	for (i = 0; i < MAX_BANS; i++)
		if (h->bans[i].until > now && h->bans[i].uid == uid)
			return 1;
	return 0;
}

static void client_drop(struct helper *h, int slot);

/* A sender of an fd that is neither a socket nor a dma-buf: refused for
 * BAN_MS, and its other connections dropped (except `keep`, whose caller
 * drops it). */
static void ban(struct helper *h, const struct client *c, int keep)
{
	uint64_t now = dm_now_ms();
	uid_t uid = c->uid;
	int i, slot = 0;

	logf_("uid %u pid %d: sent an fd that is neither a socket nor a dma-buf: refused for "
	      "%d s", (unsigned)uid, (int)c->pid, BAN_MS / 1000);
	for (i = 0; i < MAX_BANS; i++)
		if (h->bans[i].until < h->bans[slot].until)
			slot = i;
	h->bans[slot].uid = uid;
	h->bans[slot].until = now + BAN_MS;
	for (i = 0; i < MAX_CLIENTS; i++)
		if (i != keep && h->clients[i] && h->clients[i]->uid == uid)
			client_drop(h, i);
}

/* ------------------------------------------------------------- clients */

static int user_rules(const struct helper *h, uid_t uid)
{
	int i, n = 0;

	for (i = 0; i < MAX_CLIENTS; i++)
		if (h->clients[i] && h->clients[i]->uid == uid)
			n += h->clients[i]->nrules;
	return n;
}

static int same_addr(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return 0;
	if (a->ss_family == AF_INET) {
		const struct sockaddr_in *x = (const void *)a, *y = (const void *)b;

		return x->sin_port == y->sin_port && x->sin_addr.s_addr == y->sin_addr.s_addr;
	}
	if (a->ss_family == AF_INET6) {
		const struct sockaddr_in6 *x = (const void *)a, *y = (const void *)b;

		return x->sin6_port == y->sin6_port &&
		       !memcmp(&x->sin6_addr, &y->sin6_addr, sizeof(x->sin6_addr));
	}
	return 0;
}

/* Deletes rule i's entry in the NIC by its flow: 0 when it is gone (or was
 * already: no rule there, or another one), else -errno and it stays. */
static int rule_unsteer(const struct helper *h, const struct client *c, struct rule *r,
			const char *why)
{
	int err;

	if (r->loc < 0)
		return 0;
	err = dm_steer_del_flow(c->ifc->name, r->loc, &r->local, &r->peer);
	if (err && err != -ENOENT && err != -ESTALE) {
		logf_("uid %u pid %d: %s: rule %d not deleted: %s", (unsigned)c->uid, (int)c->pid,
		      c->ifc->name, r->loc, strerror(-err));
		return err;
	}
	if (h->verbose)
		logf_("uid %u pid %d: %s: rule %d deleted (%s)", (unsigned)c->uid, (int)c->pid,
		      c->ifc->name, r->loc, why);
	r->loc = -1 - r->loc;
	dispose(h, r->fd, FD_TCP);
	r->fd = -1;
	return 0;
}

static void client_drop(struct helper *h, int slot)
{
	struct client *c = h->clients[slot];
	int i;

	for (i = 0; i < c->nrules; i++) {
		struct rule *r = &c->rules[i];

		if (!rule_unsteer(h, c, r, "connection closed"))
			continue;
		/* the sweep tries again, by the flow */
		if (h->norphans < MAX_ORPHANS) {
			struct orphan *o = &h->orphans[h->norphans++];

			snprintf(o->ifname, sizeof(o->ifname), "%s", c->ifc->name);
			o->loc = r->loc;
			o->local = r->local;
			o->peer = r->peer;
		} else {
			logf_("%s: rule %d of a closed connection left: delete it with ethtool "
			      "-N %s delete %d", c->ifc->name, r->loc, c->ifc->name, r->loc);
		}
		dispose(h, r->fd, FD_TCP);
	}
	/* last: the rules no longer point at the queue */
	if (c->nl.fd >= 0 && h->verbose)
		logf_("uid %u pid %d: binding %u let go", (unsigned)c->uid, (int)c->pid, c->id);
	dm_nl_close(&c->nl);
	/* files queued in it, unread, are released with it: maybe slowly */
	to_reaper(h, c->fd);
	free(c);
	h->clients[slot] = NULL;
}

static int in_group(int fd, gid_t gid, gid_t primary)
{
	gid_t groups[NGROUPS_MAX];
	socklen_t l = sizeof(groups);
	unsigned i;

	if (primary == gid)
		return 1;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &l))
		return 0;
	for (i = 0; i < l / sizeof(gid_t); i++)
		if (groups[i] == gid)
			return 1;
	return 0;
}

/* 0, or -1 when accept4() is out of fds (the caller backs off). */
static int accept_one(struct helper *h)
{
	struct ucred cred;
	socklen_t cl = sizeof(cred);
	struct client *c;
	int fd, i, slot = -1, conns = 0, err = 0;
	char why[DM_HELPER_WHY];

	fd = accept4(h->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0)
		return errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
		       errno == ENOMEM ? -1 : 0;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl)) {
		close(fd);
		return 0;
	}
	for (i = 0; i < MAX_CLIENTS; i++) {
		if (!h->clients[i]) {
			if (slot < 0)
				slot = i;
		} else if (h->clients[i]->uid == cred.uid) {
			conns++;
		}
	}
	/* refused: told why, closed at once (the reply waits in the socket) */
	if (cred.uid && !in_group(fd, h->gid, cred.gid)) {
		err = -EPERM;
		snprintf(why, sizeof(why), "uid %u is not in the helper's group %u",
			 (unsigned)cred.uid, (unsigned)h->gid);
	} else if (banned(h, cred.uid, dm_now_ms())) {
		err = -EPERM;
		snprintf(why, sizeof(why), "uid %u sent an fd of an unknown type: refused for "
			 "%d s", (unsigned)cred.uid, BAN_MS / 1000);
	} else if (conns >= h->max_conns || slot < 0) {
		err = -EUSERS;
		snprintf(why, sizeof(why), "uid %u has as many connections as the helper allows "
			 "(%d, -c)", (unsigned)cred.uid, slot < 0 ? MAX_CLIENTS : h->max_conns);
	}
	if (err) {
		logf_("uid %u pid %d: refused: %s", (unsigned)cred.uid, (int)cred.pid, why);
		reply(fd, NULL, NULL, err, 0, -1, "%s", why);
		to_reaper(h, fd);
		return 0;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		close(fd);
		return 0;
	}
	c->fd = fd;
	c->nl.fd = -1;
	c->uid = cred.uid;
	c->pid = cred.pid;
	h->clients[slot] = c;
	if (h->verbose)
		logf_("uid %u pid %d: connected", (unsigned)c->uid, (int)c->pid);
	return 0;
}

/* ------------------------------------------------------------ requests */

static int do_bind(struct helper *h, struct client *c, const struct dm_helper_req *q, int fd)
{
	char name[IF_NAMESIZE], drv[64] = "", why[300];
	const struct iface *f = NULL;
	int i, j, err;

	if (c->nl.fd >= 0)
		return reply(c->fd, c, q, -EBUSY, 0, -1, "this connection has a binding already");
	if (fd < 0)
		return reply(c->fd, c, q, -EBADF, 0, -1, "bind-rx needs the dma-buf's fd");
	if (fd_kind(fd) != FD_DMABUF)
		return reply(c->fd, c, q, -EINVAL, 0, -1, "bind-rx: the fd is not a dma-buf");
	if (q->ifindex <= 0 || !if_indextoname((unsigned)q->ifindex, name))
		return reply(c->fd, c, q, -ENODEV, 0, -1, "no interface %d here", q->ifindex);
	for (i = 0; i < h->nifs; i++)
		if (!strcmp(h->ifs[i].name, name))
			f = &h->ifs[i];
	if (!f)
		return reply(c->fd, c, q, -EPERM, 0, -1, "%s is not among the helper's "
			     "interfaces (-i)", name);
	if (!q->nqueues || q->nqueues > DM_HELPER_MAX_QUEUES)
		return reply(c->fd, c, q, -EINVAL, 0, -1, "%u queues", q->nqueues);
	for (i = 0; i < (int)q->nqueues; i++) {
		for (j = 0; j < f->nqueues; j++)
			if (q->queues[i] == f->queues[j])
				break;
		if (j == f->nqueues)
			return reply(c->fd, c, q, -EPERM, 0, -1, "queue %u of %s is not among "
				     "the helper's (-i %s=...)", q->queues[i], name, name);
		for (j = 0; j < i; j++)
			if (q->queues[i] == q->queues[j])
				return reply(c->fd, c, q, -EINVAL, 0, -1, "queue %u twice",
					     q->queues[i]);
	}
	/* fail closed: a driver not known to steer by flow is refused too */
	err = dm_ethtool_driver(name, drv, sizeof(drv));
	if (err)
		return reply(c->fd, c, q, -EPERM, 0, -1, "cannot name the driver of %s (%s): "
			     "refused, it may steer by RSS bucket", name, strerror(-err));
	for (i = 0; !f->shared_buckets &&
		    i < (int)(sizeof(bucket_drivers) / sizeof(bucket_drivers[0])); i++)
		if (!strcmp(drv, bucket_drivers[i]))
			return reply(c->fd, c, q, -EPERM, 0, -1, "%s (%s) steers by RSS bucket: "
				     "other users' flows would land in this job's memory; the "
				     "administrator allows it with -i %s=...,shared-buckets", name,
				     drv, name);
	err = dm_ethtool_rss_uses(name, q->queues, (int)q->nqueues);
	if (err)
		return reply(c->fd, c, q, err > 0 ? -EBUSY : err, 0, -1, err > 0 ?
			     "the RSS table of %s sends host traffic to these queues" :
			     "cannot read the RSS table of %s", name);
	err = dm_ethtool_rules_to(name, q->queues, (int)q->nqueues);
	if (err > 0)
		return reply(c->fd, c, q, -EBUSY, 0, -1, "%d ntuple rule(s) of %s already send "
			     "traffic to these queues", err, name);
	if (err)
		return reply(c->fd, c, q, err, 0, -1, "cannot read the ntuple rules of %s", name);
	if (dm_nl_open(&c->nl, why, sizeof(why)))
		return reply(c->fd, c, q, -EIO, 0, -1, "%s", why);
	err = dm_nl_bind_rx(&c->nl, q->ifindex, fd, q->queues, (int)q->nqueues, &c->id, why,
			    sizeof(why));
	if (err) {
		dm_nl_close(&c->nl);
		return reply(c->fd, c, q, err, 0, -1, "bind-rx: %s", why);
	}
	c->ifc = f;
	c->ifindex = q->ifindex;
	c->nqueues = (int)q->nqueues;
	memcpy(c->queues, q->queues, sizeof(c->queues));
	logf_("uid %u pid %d: %s queue %u%s bound, binding %u", (unsigned)c->uid, (int)c->pid,
	      name, c->queues[0], c->nqueues > 1 ? " and more" : "", c->id);
	return reply(c->fd, c, q, 0, c->id, -1, NULL);
}

/* A socket bound to a device (SO_BINDTODEVICE, any user may set it) does
 * not keep its 4-tuple from an unbound socket: another user's connection
 * could share the flow steered.  1 when bound, or when unknown. */
static int bound_to_device(int fd)
{
	int ifindex = 0;
	socklen_t l = sizeof(ifindex);

	return getsockopt(fd, SOL_SOCKET, SO_BINDTOIFINDEX, &ifindex, &l) || ifindex;
}

/* The socket's flow now; 0 or -errno. */
static int flow_of(int fd, struct sockaddr_storage *local, struct sockaddr_storage *peer)
{
	socklen_t ll = sizeof(*local), pl = sizeof(*peer);

	memset(local, 0, sizeof(*local));
	memset(peer, 0, sizeof(*peer));
	if (getsockname(fd, (struct sockaddr *)local, &ll) ||
	    getpeername(fd, (struct sockaddr *)peer, &pl))
		return -errno;
	return 0;
}

static int do_steer(struct helper *h, struct client *c, const struct dm_helper_req *q, int *fdp)
{
	struct rule *r = &c->rules[c->nrules];
	struct sockaddr_storage l2, p2;
	int v[3] = { 0 }, i, err, loc, fd = *fdp;
	socklen_t l;
	char why[320];

	if (c->nl.fd < 0)
		return reply(c->fd, c, q, -EINVAL, 0, -1, "no binding on this connection");
	for (i = 0; i < c->nqueues; i++)
		if (c->queues[i] == q->queues[0])
			break;
	if (i == c->nqueues)
		return reply(c->fd, c, q, -EINVAL, 0, -1, "queue %u is not this connection's "
			     "binding's", q->queues[0]);
	if (fd < 0)
		return reply(c->fd, c, q, -EBADF, 0, -1, "steer needs the socket's fd");
	l = sizeof(int);
	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &v[0], &l))
		return reply(c->fd, c, q, -errno, 0, -1, "not a socket");
	l = sizeof(int);
	getsockopt(fd, SOL_SOCKET, SO_TYPE, &v[1], &l);
	l = sizeof(int);
	getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &v[2], &l);
	if ((v[0] != AF_INET && v[0] != AF_INET6) || v[1] != SOCK_STREAM || v[2] != IPPROTO_TCP)
		return reply(c->fd, c, q, -EPROTONOSUPPORT, 0, -1, "not a TCP socket");
	if (bound_to_device(fd))
		return reply(c->fd, c, q, -EPERM, 0, -1, "the socket is bound to a device "
			     "(SO_BINDTODEVICE): another socket could share its flow");
	if (netns_cookie(fd) != h->netns)
		return reply(c->fd, c, q, -EXDEV, 0, -1, "the socket is in another network "
			     "namespace than the helper");
	if (c->nrules == MAX_RULES_PER_CONN || user_rules(h, c->uid) >= h->max_rules)
		return reply(c->fd, c, q, -ENOSPC, 0, -1, "this user has as many rules as the "
			     "helper allows (%d, -r)", c->nrules == MAX_RULES_PER_CONN ?
			     MAX_RULES_PER_CONN : h->max_rules);
	/* the flow read once: what is added is what is checked and deleted */
	err = flow_of(fd, &r->local, &r->peer);
	if (err)
		return reply(c->fd, c, q, err, 0, -1, "the socket is not connected");
	err = dm_steer_add_flow(c->ifc->name, &r->local, &r->peer, q->queues[0], &loc, why,
				sizeof(why));
	if (err)
		return reply(c->fd, c, q, err, 0, -1, "%s", why);
	r->fd = fd;
	r->loc = loc;
	r->queue = q->queues[0];
	c->nrules++;
	*fdp = -1;	/* kept */
	/* the socket changed meanwhile: not that flow's any more */
	if (flow_of(fd, &l2, &p2) || !same_addr(&l2, &r->local) || !same_addr(&p2, &r->peer)) {
		if (!rule_unsteer(h, c, r, "the socket changed"))
			c->nrules--;	/* gone: the caller has no location to unsteer */
		return reply(c->fd, c, q, -EAGAIN, 0, -1, "the socket's flow changed while it "
			     "was steered");
	}
	if (h->verbose)
		logf_("uid %u pid %d: %s: rule %d to queue %u", (unsigned)c->uid, (int)c->pid,
		      c->ifc->name, loc, q->queues[0]);
	return reply(c->fd, c, q, 0, 0, loc, NULL);
}

static int do_unsteer(struct helper *h, struct client *c, const struct dm_helper_req *q)
{
	int i, err;

	/* a rule the sweep deleted is at -1 - loc: a rule at loc comes first
	 * (the location may have been taken again since) */
	for (i = 0; q->loc >= 0 && i < c->nrules; i++)
		if (c->rules[i].loc == q->loc)
			break;
	if (q->loc >= 0 && i == c->nrules)
		for (i = 0; i < c->nrules; i++)
			if (c->rules[i].loc == -1 - q->loc)
				break;
	if (q->loc < 0 || i == c->nrules)
		return reply(c->fd, c, q, -ENOENT, 0, -1, "no rule %d of this connection", q->loc);
	err = rule_unsteer(h, c, &c->rules[i], "asked");
	if (err)	/* it stays, counted; the sweep tries again */
		return reply(c->fd, c, q, err, 0, -1, "rule %d not deleted", q->loc);
	c->rules[i] = c->rules[--c->nrules];
	return reply(c->fd, c, q, 0, 0, q->loc, NULL);
}

/* One message; -1: drop the client. */
static int serve(struct helper *h, int slot)
{
	struct client *c = h->clients[slot];
	struct dm_helper_req q;
	char extra;
	struct iovec iov[2] = { { &q, sizeof(q) }, { &extra, 1 } };
	union {
		char buf[CMSG_SPACE(sizeof(int) * MAX_FDS_IN)];
		struct cmsghdr align;
	} cm;
	struct msghdr m = { .msg_iov = iov, .msg_iovlen = 2, .msg_control = cm.buf,
			    .msg_controllen = sizeof(cm.buf) };
	struct cmsghdr *cmh;
	int fds[MAX_FDS_IN], kinds[MAX_FDS_IN], nfds = 0, i, rc, fd, odd = 0;
	ssize_t n;

	n = recvmsg(c->fd, &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n <= 0)
		return -1;
	for (cmh = CMSG_FIRSTHDR(&m); cmh; cmh = CMSG_NXTHDR(&m, cmh)) {
		size_t k;

		if (cmh->cmsg_level != SOL_SOCKET || cmh->cmsg_type != SCM_RIGHTS)
			continue;
		for (k = 0; k < (cmh->cmsg_len - CMSG_LEN(0)) / sizeof(int); k++) {
			memcpy(&fd, CMSG_DATA(cmh) + k * sizeof(int), sizeof(int));
			if (nfds == MAX_FDS_IN) {	/* cannot be: SCM_MAX_FD */
				to_reaper(h, fd);
				continue;
			}
			fds[nfds] = fd;
			kinds[nfds] = fd_kind(fd);
			odd |= kinds[nfds] == FD_OTHER;
			nfds++;
		}
	}
	rc = 0;
	if (odd) {
		reply(c->fd, c, NULL, -EPERM, 0, -1, "an fd that is neither a socket nor a "
		      "dma-buf: refused for %d s", BAN_MS / 1000);
		ban(h, c, slot);
		rc = -1;
	} else if ((m.msg_flags & (MSG_CTRUNC | MSG_TRUNC)) || n != (ssize_t)sizeof(q)) {
		reply(c->fd, c, NULL, -EINVAL, 0, -1, "a request is %zu bytes with at most one fd, "
		      "this was %zd%s", sizeof(q), n,
		      m.msg_flags & MSG_CTRUNC ? " with too many fds" : "");
		rc = -1;
	} else if (q.magic != DM_HELPER_MAGIC || q.version != DM_HELPER_VERSION) {
		reply(c->fd, c, NULL, -EPROTO, 0, -1, "not a version %d request",
		      DM_HELPER_VERSION);
		rc = -1;
	} else if (nfds > 1 || q.reserved) {
		rc = reply(c->fd, c, &q, -EINVAL, 0, -1, "%d fds, reserved %u: one fd at most, "
			   "reserved 0", nfds, q.reserved);
	} else {
		fd = nfds ? fds[0] : -1;
		switch (q.op) {
		case DM_HELPER_BIND_RX:
			rc = do_bind(h, c, &q, fd);
			break;
		case DM_HELPER_STEER:
			rc = do_steer(h, c, &q, &fd);
			break;
		case DM_HELPER_UNSTEER:
			rc = fd >= 0 ? reply(c->fd, c, &q, -EINVAL, 0, -1, "unsteer takes no fd") :
				       do_unsteer(h, c, &q);
			break;
		default:
			rc = reply(c->fd, c, &q, -EOPNOTSUPP, 0, -1, "no operation %u", q.op);
		}
		if (fd < 0)	/* kept by do_steer */
			fds[0] = -1;
	}
	for (i = 0; i < nfds; i++)
		dispose(h, fds[i], kinds[i]);
	return rc;
}

/* Rules whose socket is no longer connected to the flow steered: the
 * 4-tuple may be taken by another socket, another user's, and its packets
 * must not follow.  Rules not deleted before are tried again. */
static void sweep(struct helper *h)
{
	int s, i;

	for (s = 0; s < MAX_CLIENTS; s++) {
		struct client *c = h->clients[s];

		for (i = 0; c && i < c->nrules; i++) {
			struct rule *r = &c->rules[i];
			struct sockaddr_storage l2, p2;
			struct tcp_info ti;
			socklen_t l = sizeof(ti);

			if (r->loc < 0)
				continue;
			if (!getsockopt(r->fd, IPPROTO_TCP, TCP_INFO, &ti, &l) &&
			    ti.tcpi_state != TCP_CLOSE && ti.tcpi_state != TCP_LISTEN &&
			    ti.tcpi_state != TCP_SYN_SENT && !flow_of(r->fd, &l2, &p2) &&
			    same_addr(&l2, &r->local) && same_addr(&p2, &r->peer) &&
			    !bound_to_device(r->fd))
				continue;
			/* deleted, the entry kept for the caller's unsteer */
			rule_unsteer(h, c, r, "the socket left its flow");
		}
	}
	for (i = 0; i < h->norphans; i++) {
		struct orphan *o = &h->orphans[i];
		int err = dm_steer_del_flow(o->ifname, o->loc, &o->local, &o->peer);

		if (err && err != -ENOENT && err != -ESTALE)
			continue;
		logf_("%s: rule %d of a closed connection deleted", o->ifname, o->loc);
		*o = h->orphans[--h->norphans];
		i--;
	}
}

static int listen_on(struct helper *h)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	mode_t old;
	int fd;

	if (strlen(h->path) >= sizeof(sa.sun_path)) {
		logf_("%s: path too long", h->path);
		return -1;
	}
	strcpy(sa.sun_path, h->path);
	/* a stale socket of an earlier run goes; anything else stays */
	if (!lstat(h->path, &st)) {
		if (!S_ISSOCK(st.st_mode)) {
			logf_("%s exists and is not a socket", h->path);
			return -1;
		}
		unlink(h->path);
	}
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -1;
	old = umask(0177);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		logf_("bind %s: %s", h->path, strerror(errno));
		umask(old);
		close(fd);
		return -1;
	}
	umask(old);
	if (chown(h->path, 0, h->gid) || chmod(h->path, 0660) || listen(fd, 64)) {
		logf_("%s: %s", h->path, strerror(errno));
		close(fd);
		unlink(h->path);
		return -1;
	}
	return fd;
}

int main(int argc, char **argv)
{
	static struct helper h;
	struct pollfd pfd[MAX_CLIENTS + 1];
	int slots[MAX_CLIENTS + 1];
	struct sigaction sa;
	struct group *gr;
	uint64_t next_sweep = 0, backoff_until = 0;
	pthread_t reaper_thread;
	struct rlimit rl;
	int opt, i, have_gid = 0, reap[2];

	h.max_rules = 16;
	h.max_conns = 8;
	while ((opt = getopt(argc, argv, "s:g:i:r:c:v")) != -1) {
		switch (opt) {
		case 's':
			h.path = optarg;
			break;
		case 'g':
			gr = getgrnam(optarg);
			h.gid = gr ? gr->gr_gid : (gid_t)parse_int(optarg, 0, INT_MAX);
			have_gid = 1;
			break;
		case 'i':
			if (parse_if(&h, optarg))
				usage();
			break;
		case 'r':
			h.max_rules = parse_int(optarg, 0, 1024);
			break;
		case 'c':
			h.max_conns = parse_int(optarg, 1, MAX_CLIENTS);
			break;
		case 'v':
			h.verbose = 1;
			break;
		default:
			usage();
		}
	}
	if (!h.path || !have_gid || !h.nifs || optind != argc)
		usage();
	if (geteuid()) {
		logf_("runs as root (it binds queues and adds ntuple rules for others)");
		return 1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;	/* no SA_RESTART: poll() returns */
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGQUIT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	/* every client holds its socket, a netlink socket and its rules' */
	if (!getrlimit(RLIMIT_NOFILE, &rl)) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (pipe2(reap, O_CLOEXEC) || fcntl(reap[1], F_SETFL, O_NONBLOCK) ||
	    pthread_create(&reaper_thread, NULL, reaper, (void *)(intptr_t)reap[0])) {
		logf_("the reaper thread: %s", strerror(errno));
		return 1;
	}
	h.reap_fd = reap[1];
	h.lfd = listen_on(&h);
	if (h.lfd < 0)
		return 1;
	h.netns = netns_cookie(h.lfd);
	if (!h.netns) {
		logf_("cannot read the network namespace's cookie (SO_NETNS_COOKIE): a kernel "
		      "before 5.14?");
		close(h.lfd);
		unlink(h.path);
		return 1;
	}
	for (i = 0; i < h.nifs; i++)
		logf_("serving %s queue %u%s%s to group %u on %s", h.ifs[i].name, h.ifs[i].queues[0],
		      h.ifs[i].nqueues > 1 ? " and more" : "",
		      h.ifs[i].shared_buckets ? " (shared RSS buckets allowed)" : "",
		      (unsigned)h.gid, h.path);
	while (!stop) {
		int n = 0, r;
		uint64_t now;

		/* out of fds: the listening socket waits, not spins */
		if (backoff_until && dm_now_ms() >= backoff_until)
			backoff_until = 0;
		pfd[n].fd = backoff_until ? -1 : h.lfd;
		pfd[n].events = POLLIN;
		slots[n++] = -1;
		for (i = 0; i < MAX_CLIENTS; i++) {
			if (!h.clients[i])
				continue;
			pfd[n].fd = h.clients[i]->fd;
			pfd[n].events = POLLIN;
			slots[n++] = i;
		}
		r = poll(pfd, (nfds_t)n, backoff_until ? 100 : SWEEP_MS);
		if (r < 0 && errno != EINTR)
			break;
		for (i = 0; r > 0 && i < n; i++) {
			/* a ban may have dropped a client polled */
			if (!pfd[i].revents || (slots[i] >= 0 && !h.clients[slots[i]]))
				continue;
			if (slots[i] < 0) {
				if (accept_one(&h))
					backoff_until = dm_now_ms() + 100;
			} else if (serve(&h, slots[i])) {
				client_drop(&h, slots[i]);
			}
		}
		now = dm_now_ms();
		if (now >= next_sweep) {
			sweep(&h);
			next_sweep = now + SWEEP_MS;
		}
	}
	for (i = 0; i < MAX_CLIENTS; i++)
		if (h.clients[i])
			client_drop(&h, i);
	close(h.lfd);
	unlink(h.path);
	logf_("stopped");
	return 0;
}
