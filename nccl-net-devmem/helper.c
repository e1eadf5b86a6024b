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
 * not on a queue the RSS table uses (other users' flows would land in the
 * caller's memory); rules only for connected TCP sockets the caller sends,
 * in this network namespace, only to the queues of that connection's
 * binding.  The helper keeps each steered socket open (its 4-tuple cannot
 * be taken by anyone else) and checks every second that it is still
 * connected, deleting the rule of one that is not.  On igb a rule moves a
 * whole RSS bucket, other users' flows included: such an interface is
 * refused unless the administrator says ",shared-buckets".
 *
 * How much: at most RULES rules (-r, default 16) and CONNS connections
 * (-c, default 8) per user.  Every request is answered at once (ethtool
 * and netlink calls, the steering lock tried for 20 ms at most); a reply
 * the caller does not read ends its connection.  Everything a connection
 * made is undone when it closes, whatever the caller's state.
 *
 * One thread, poll(); the client table is this file's alone.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "helper_proto.h"
#include "plugin.h"

#define MAX_CLIENTS 256
#define MAX_IFS 8
#define MAX_RULES_PER_CONN 64
#define MAX_FDS_IN 4		/* fds a message may carry before it is refused */
#define SWEEP_MS 1000
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
	int fd;			/* the steered socket, kept open */
	int loc;
	unsigned queue;
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
	/* refused at accept: the first request gets this, then the end */
	int refused;
	char refused_why[DM_HELPER_WHY];
	uint64_t since;		/* dm_now_ms() at accept */
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
	struct client *clients[MAX_CLIENTS];
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

static int reply(struct client *c, const struct dm_helper_req *q, int err, uint32_t id, int loc,
		 int pass_fd, const char *fmt, ...) __attribute__((format(printf, 7, 8)));
static int reply(struct client *c, const struct dm_helper_req *q, int err, uint32_t id, int loc,
		 int pass_fd, const char *fmt, ...)
{
	struct dm_helper_rep r;
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} cm;
	struct iovec iov = { &r, sizeof(r) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
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
	if (err && q)
		logf_("uid %u pid %d: op %u refused: %s (%s)", (unsigned)c->uid, (int)c->pid,
		      (unsigned)r.op, r.why, strerror(-err));
	if (pass_fd >= 0) {
		struct cmsghdr *h;

		memset(&cm, 0, sizeof(cm));
		m.msg_control = cm.buf;
		m.msg_controllen = sizeof(cm.buf);
		h = CMSG_FIRSTHDR(&m);
		h->cmsg_level = SOL_SOCKET;
		h->cmsg_type = SCM_RIGHTS;
		h->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(h), &pass_fd, sizeof(int));
	}
	/* a caller that does not read its replies loses its connection */
	if (sendmsg(c->fd, &m, MSG_DONTWAIT | MSG_NOSIGNAL) != (ssize_t)sizeof(r))
		return -1;
	return 0;
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

static void rule_drop(struct helper *h, struct client *c, int i, const char *why)
{
	struct rule *r = &c->rules[i];
	int err;

	if (r->loc >= 0) {
		err = dm_steer_del(c->ifc->name, r->fd, r->loc);
		if (err)
			logf_("uid %u pid %d: %s: rule %d not deleted: %s", (unsigned)c->uid,
			      (int)c->pid, c->ifc->name, r->loc,
			      err == -ESTALE ? "another rule took its place" : strerror(-err));
		else if (h->verbose)
			logf_("uid %u pid %d: %s: rule %d deleted (%s)", (unsigned)c->uid,
			      (int)c->pid, c->ifc->name, r->loc, why);
	}
	if (r->fd >= 0)
		close(r->fd);
	c->rules[i] = c->rules[--c->nrules];
}

static void client_drop(struct helper *h, int slot)
{
	struct client *c = h->clients[slot];

	while (c->nrules)
		rule_drop(h, c, c->nrules - 1, "connection closed");
	/* last: the rules no longer point at the queue */
	if (c->nl.fd >= 0 && h->verbose)
		logf_("uid %u pid %d: binding %u let go", (unsigned)c->uid, (int)c->pid, c->id);
	dm_nl_close(&c->nl);
	close(c->fd);
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

static void accept_one(struct helper *h)
{
	struct ucred cred;
	socklen_t cl = sizeof(cred);
	struct client tmp, *c;
	int fd, i, slot = -1, conns = 0;

	fd = accept4(h->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0)
		return;
	memset(&tmp, 0, sizeof(tmp));
	tmp.fd = fd;
	tmp.nl.fd = -1;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl)) {
		close(fd);
		return;
	}
	tmp.uid = cred.uid;
	tmp.pid = cred.pid;
	tmp.since = dm_now_ms();
	for (i = 0; i < MAX_CLIENTS; i++) {
		if (!h->clients[i]) {
			if (slot < 0)
				slot = i;
		} else if (h->clients[i]->uid == cred.uid && !h->clients[i]->refused) {
			conns++;
		}
	}
	if (slot < 0) {
		logf_("uid %u pid %d: refused: %d connections", (unsigned)cred.uid, (int)cred.pid,
		      MAX_CLIENTS);
		close(fd);
		return;
	}
	/* a refused caller is told why in the reply to its first request */
	if (cred.uid && !in_group(fd, h->gid, cred.gid)) {
		tmp.refused = -EPERM;
		snprintf(tmp.refused_why, sizeof(tmp.refused_why), "uid %u is not in the helper's "
			 "group %u", (unsigned)cred.uid, (unsigned)h->gid);
	} else if (conns >= h->max_conns) {
		tmp.refused = -EUSERS;
		snprintf(tmp.refused_why, sizeof(tmp.refused_why), "uid %u has as many "
			 "connections as the helper allows (%d, -c)", (unsigned)cred.uid,
			 h->max_conns);
	}
	if (tmp.refused)
		logf_("uid %u pid %d: refused: %s", (unsigned)cred.uid, (int)cred.pid,
		      tmp.refused_why);
	c = malloc(sizeof(*c));
	if (!c) {
		close(fd);
		return;
	}
	*c = tmp;
	h->clients[slot] = c;
	if (h->verbose && !c->refused)
		logf_("uid %u pid %d: connected", (unsigned)c->uid, (int)c->pid);
}

/* ------------------------------------------------------------ requests */

static int do_bind(struct helper *h, struct client *c, const struct dm_helper_req *q, int fd)
{
	char name[IF_NAMESIZE], drv[64] = "", why[300];
	const struct iface *f = NULL;
	int i, j, err;

	if (c->nl.fd >= 0)
		return reply(c, q, -EBUSY, 0, -1, -1, "this connection has a binding already");
	if (fd < 0)
		return reply(c, q, -EBADF, 0, -1, -1, "bind-rx needs the dma-buf's fd");
	if (q->ifindex <= 0 || !if_indextoname((unsigned)q->ifindex, name))
		return reply(c, q, -ENODEV, 0, -1, -1, "no interface %d here", q->ifindex);
	for (i = 0; i < h->nifs; i++)
		if (!strcmp(h->ifs[i].name, name))
			f = &h->ifs[i];
	if (!f)
		return reply(c, q, -EPERM, 0, -1, -1, "%s is not among the helper's interfaces "
			     "(-i)", name);
	if (!q->nqueues || q->nqueues > DM_HELPER_MAX_QUEUES)
		return reply(c, q, -EINVAL, 0, -1, -1, "%u queues", q->nqueues);
	for (i = 0; i < (int)q->nqueues; i++) {
		for (j = 0; j < f->nqueues; j++)
			if (q->queues[i] == f->queues[j])
				break;
		if (j == f->nqueues)
			return reply(c, q, -EPERM, 0, -1, -1, "queue %u of %s is not among the "
				     "helper's (-i %s=...)", q->queues[i], name, name);
		for (j = 0; j < i; j++)
			if (q->queues[i] == q->queues[j])
				return reply(c, q, -EINVAL, 0, -1, -1, "queue %u twice",
					     q->queues[i]);
	}
	if (!f->shared_buckets && !dm_ethtool_driver(name, drv, sizeof(drv))) {
		for (i = 0; i < (int)(sizeof(bucket_drivers) / sizeof(bucket_drivers[0])); i++)
			if (!strcmp(drv, bucket_drivers[i]))
				return reply(c, q, -EPERM, 0, -1, -1, "%s (%s) steers by RSS "
					     "bucket: other users' flows would land in this "
					     "job's memory; the administrator allows it with -i "
					     "%s=...,shared-buckets", name, drv, name);
	}
	err = dm_ethtool_rss_uses(name, q->queues, (int)q->nqueues);
	if (err)
		return reply(c, q, err > 0 ? -EBUSY : err, 0, -1, -1, err > 0 ?
			     "the RSS table of %s sends host traffic to these queues" :
			     "cannot read the RSS table of %s", name);
	if (dm_nl_open(&c->nl, why, sizeof(why)))
		return reply(c, q, -EIO, 0, -1, -1, "%s", why);
	err = dm_nl_bind_rx(&c->nl, q->ifindex, fd, q->queues, (int)q->nqueues, &c->id, why,
			    sizeof(why));
	if (err) {
		dm_nl_close(&c->nl);
		return reply(c, q, err, 0, -1, -1, "bind-rx: %s", why);
	}
	c->ifc = f;
	c->ifindex = q->ifindex;
	c->nqueues = (int)q->nqueues;
	memcpy(c->queues, q->queues, sizeof(c->queues));
	logf_("uid %u pid %d: %s queue %u%s bound, binding %u", (unsigned)c->uid, (int)c->pid,
	      name, c->queues[0], c->nqueues > 1 ? " and more" : "", c->id);
	return reply(c, q, 0, c->id, -1, c->nl.fd, NULL);
}

static int do_steer(struct helper *h, struct client *c, const struct dm_helper_req *q, int *fdp)
{
	struct sockaddr_storage peer;
	socklen_t pl = sizeof(peer);
	int v[3] = { 0 }, i, err, loc, fd = *fdp;
	socklen_t l;
	char why[320];

	if (c->nl.fd < 0)
		return reply(c, q, -EINVAL, 0, -1, -1, "no binding on this connection");
	for (i = 0; i < c->nqueues; i++)
		if (c->queues[i] == q->queues[0])
			break;
	if (i == c->nqueues)
		return reply(c, q, -EINVAL, 0, -1, -1, "queue %u is not this connection's binding's",
			     q->queues[0]);
	if (fd < 0)
		return reply(c, q, -EBADF, 0, -1, -1, "steer needs the socket's fd");
	l = sizeof(int);
	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &v[0], &l))
		return reply(c, q, -errno, 0, -1, -1, "not a socket");
	l = sizeof(int);
	getsockopt(fd, SOL_SOCKET, SO_TYPE, &v[1], &l);
	l = sizeof(int);
	getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &v[2], &l);
	if ((v[0] != AF_INET && v[0] != AF_INET6) || v[1] != SOCK_STREAM || v[2] != IPPROTO_TCP)
		return reply(c, q, -EPROTONOSUPPORT, 0, -1, -1, "not a TCP socket");
	if (netns_cookie(fd) != h->netns)
		return reply(c, q, -EXDEV, 0, -1, -1, "the socket is in another network "
			     "namespace than the helper");
	if (getpeername(fd, (struct sockaddr *)&peer, &pl))
		return reply(c, q, -errno, 0, -1, -1, "the socket is not connected");
	if (c->nrules == MAX_RULES_PER_CONN || user_rules(h, c->uid) >= h->max_rules)
		return reply(c, q, -ENOSPC, 0, -1, -1, "this user has as many rules as the "
			     "helper allows (%d, -r)", c->nrules == MAX_RULES_PER_CONN ?
			     MAX_RULES_PER_CONN : h->max_rules);
	err = dm_steer_add(c->ifc->name, fd, q->queues[0], &loc, why, sizeof(why));
	if (err)
		return reply(c, q, err, 0, -1, -1, "%s", why);
	c->rules[c->nrules].fd = fd;
	c->rules[c->nrules].loc = loc;
	c->rules[c->nrules].queue = q->queues[0];
	c->nrules++;
	*fdp = -1;	/* kept */
	if (h->verbose)
		logf_("uid %u pid %d: %s: rule %d to queue %u", (unsigned)c->uid, (int)c->pid,
		      c->ifc->name, loc, q->queues[0]);
	return reply(c, q, 0, 0, loc, -1, NULL);
}

static int do_unsteer(struct helper *h, struct client *c, const struct dm_helper_req *q)
{
	int i;

	/* a rule the sweep deleted is at -1 - loc */
	for (i = 0; q->loc >= 0 && i < c->nrules; i++)
		if (c->rules[i].loc == q->loc || c->rules[i].loc == -1 - q->loc)
			break;
	if (q->loc < 0 || i == c->nrules)
		return reply(c, q, -ENOENT, 0, -1, -1, "no rule %d of this connection", q->loc);
	rule_drop(h, c, i, "asked");
	return reply(c, q, 0, 0, q->loc, -1, NULL);
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
	int fds[MAX_FDS_IN], nfds = 0, i, rc, fd;
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
			if (nfds < MAX_FDS_IN)
				fds[nfds++] = fd;
			else
				close(fd);
		}
	}
	rc = 0;
	if (c->refused) {
		reply(c, NULL, c->refused, 0, -1, -1, "%s", c->refused_why);
		rc = -1;
	} else if ((m.msg_flags & (MSG_CTRUNC | MSG_TRUNC)) || n != (ssize_t)sizeof(q)) {
		reply(c, NULL, -EINVAL, 0, -1, -1, "a request is %zu bytes with at most one fd, "
		      "this was %zd%s", sizeof(q), n,
		      m.msg_flags & MSG_CTRUNC ? " with too many fds" : "");
		rc = -1;
	} else if (q.magic != DM_HELPER_MAGIC || q.version != DM_HELPER_VERSION) {
		reply(c, NULL, -EPROTO, 0, -1, -1, "not a version %d request",
		      DM_HELPER_VERSION);
		rc = -1;
	} else if (nfds > 1 || q.reserved) {
		rc = reply(c, &q, -EINVAL, 0, -1, -1, "%d fds, reserved %u: one fd at most, "
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
			rc = fd >= 0 ? reply(c, &q, -EINVAL, 0, -1, -1, "unsteer takes no fd") :
				       do_unsteer(h, c, &q);
			break;
		default:
			rc = reply(c, &q, -EOPNOTSUPP, 0, -1, -1, "no operation %u", q.op);
		}
		if (fd >= 0)
			close(fd);
		nfds = 0;
	}
	for (i = 0; i < nfds; i++)
		close(fds[i]);
	return rc;
}

/* Rules whose socket is no longer connected: the 4-tuple may be taken by
 * another socket, another user's, and its packets must not follow. */
static void sweep(struct helper *h, uint64_t now)
{
	int s, i;

	for (s = 0; s < MAX_CLIENTS; s++) {
		struct client *c = h->clients[s];

		/* a refused caller that does not ask keeps no slot */
		if (c && c->refused && now - c->since > SWEEP_MS) {
			client_drop(h, s);
			continue;
		}

		for (i = 0; c && i < c->nrules; i++) {
			struct tcp_info ti;
			socklen_t l = sizeof(ti);

			if (c->rules[i].loc < 0)
				continue;
			if (!getsockopt(c->rules[i].fd, IPPROTO_TCP, TCP_INFO, &ti, &l) &&
			    ti.tcpi_state != TCP_CLOSE && ti.tcpi_state != TCP_LISTEN)
				continue;
			/* delete it; the entry stays for the caller's unsteer */
			if (dm_steer_del(c->ifc->name, c->rules[i].fd, c->rules[i].loc))
				logf_("uid %u pid %d: %s: rule %d of a closed socket not deleted",
				      (unsigned)c->uid, (int)c->pid, c->ifc->name, c->rules[i].loc);
			else if (h->verbose)
				logf_("uid %u pid %d: %s: rule %d deleted (socket closed)",
				      (unsigned)c->uid, (int)c->pid, c->ifc->name, c->rules[i].loc);
			c->rules[i].loc = -1 - c->rules[i].loc;	/* unsteer still finds it */
		}
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
	uint64_t next_sweep = 0;
	int opt, i, have_gid = 0;

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
	signal(SIGPIPE, SIG_IGN);
	h.lfd = listen_on(&h);
	if (h.lfd < 0)
		return 1;
	h.netns = netns_cookie(h.lfd);
	for (i = 0; i < h.nifs; i++)
		logf_("serving %s queue %u%s%s to group %u on %s", h.ifs[i].name, h.ifs[i].queues[0],
		      h.ifs[i].nqueues > 1 ? " and more" : "",
		      h.ifs[i].shared_buckets ? " (shared RSS buckets allowed)" : "",
		      (unsigned)h.gid, h.path);
	while (!stop) {
		int n = 0, r;
		uint64_t now;

		pfd[n].fd = h.lfd;
		pfd[n].events = POLLIN;
		slots[n++] = -1;
		for (i = 0; i < MAX_CLIENTS; i++) {
			if (!h.clients[i])
				continue;
			pfd[n].fd = h.clients[i]->fd;
			pfd[n].events = POLLIN;
			slots[n++] = i;
		}
		r = poll(pfd, (nfds_t)n, SWEEP_MS);
		if (r < 0 && errno != EINTR)
			break;
		for (i = 0; r > 0 && i < n; i++) {
			if (!pfd[i].revents)
				continue;
			if (slots[i] < 0)
				accept_one(&h);
			else if (serve(&h, slots[i]))
				client_drop(&h, slots[i]);
		}
		now = dm_now_ms();
		if (now >= next_sweep) {
			sweep(&h, now);
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
