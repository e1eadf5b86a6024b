// SPDX-License-Identifier: GPL-2.0
/*
 * Flow steering: one ethtool ntuple rule per data socket sends its TCP
 * 4-tuple to a devmem RX queue (ETHTOOL_SRXCLSRLINS through SIOCETHTOOL;
 * mainline has no netlink command for rules).  It needs CAP_NET_ADMIN.
 *
 * Rules live at explicit locations of the NIC's table, which other
 * programs use too: a free location is chosen from the table as it is now
 * and the rule put there, under an exclusive flock() on a lock file, so
 * that two processes of this plugin never take the same location.  Other
 * tools do not take the lock: the administrator keeps their rules apart
 * (README).
 *
 * Whoever can open the lock file can hold it, and a job that finds it
 * held for 20 ms serves its connection in copy mode.  So the file is not
 * for every user: it lives in a directory of its own that only its
 * creator (root) may enter, with mode 0600; a directory that others may
 * write to, a file that everyone may open or one that another user owns
 * (an administrator's chmod, a stale file) is not used.  A job with
 * CAP_NET_ADMIN that is not root steers only where the administrator lets
 * its group read the directory and the file (README).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <pthread.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plugin.h"

/* one lock file per interface, read-only opens suffice for flock() */
#define DM_STEER_DIR "/run/nccl-net-devmem"
#define DM_STEER_LOCK_NAME "steer.%s.lock"
#define DM_STEER_MAX_RULES 1024

static int ethtool_ioctl(const char *ifname, void *cmd)
{
	struct ifreq ifr;
	int fd, r;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		fd = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ifr.ifr_data = cmd;
	r = ioctl(fd, SIOCETHTOOL, &ifr) ? -errno : 0;
	close(fd);
	return r;
}

int dm_ethtool_rx_queues(const char *ifname)
{
	struct ethtool_channels ch = { .cmd = ETHTOOL_GCHANNELS };
	int r = ethtool_ioctl(ifname, &ch);

	if (r)
		return r;
	return (int)(ch.combined_count + ch.rx_count);
}

int dm_ethtool_rx_ring(const char *ifname)
{
	struct ethtool_ringparam rp = { .cmd = ETHTOOL_GRINGPARAM };
	int r = ethtool_ioctl(ifname, &rp);

	return r ? r : (int)rp.rx_pending;
}

int dm_ethtool_driver(const char *ifname, char *drv, size_t n)
{
	struct ethtool_drvinfo di = { .cmd = ETHTOOL_GDRVINFO };
	int r = ethtool_ioctl(ifname, &di);

	if (!r)
		snprintf(drv, n, "%.*s", (int)sizeof(di.driver), di.driver);
	return r;
}

int dm_ethtool_rss_uses(const char *ifname, const unsigned *queues, int n)
{
	struct ethtool_rxfh_indir probe = { .cmd = ETHTOOL_GRXFHINDIR };
	struct ethtool_rxfh_indir *t;
	uint32_t i;
	int r, j, hit = 0;

	r = ethtool_ioctl(ifname, &probe);
	if (r == -EOPNOTSUPP)
		return 0;	/* no RSS: traffic goes where rules send it */
	if (r)
		return r;
	if (!probe.size)
		return 0;	/* no table */
	if (probe.size > 65536)
		return -E2BIG;	/* unread is not unused */
	t = calloc(1, sizeof(*t) + probe.size * sizeof(uint32_t));
	if (!t)
		return -ENOMEM;
	t->cmd = ETHTOOL_GRXFHINDIR;
	t->size = probe.size;
	r = ethtool_ioctl(ifname, t);
	for (i = 0; !r && i < t->size && !hit; i++)
		for (j = 0; j < n; j++)
			if (t->ring_index[i] == queues[j])
				hit = 1;
	free(t);
	return r ? r : hit;
}

/* A location no rule uses now, or -errno. */
static int free_location(const char *ifname)
{
	struct ethtool_rxnfc cnt = { .cmd = ETHTOOL_GRXCLSRLCNT };
	struct ethtool_rxnfc *all;
	uint32_t n, size, loc, i;
	int r;

	r = ethtool_ioctl(ifname, &cnt);
	if (r)
		return r;
	n = cnt.rule_cnt;
	if (n > DM_STEER_MAX_RULES)
		return -ENOSPC;
	all = calloc(1, sizeof(*all) + (n + 1) * sizeof(uint32_t));
	if (!all)
		return -ENOMEM;
	all->cmd = ETHTOOL_GRXCLSRLALL;
	all->rule_cnt = n;
	r = ethtool_ioctl(ifname, all);
	if (r) {
		free(all);
		return r;
	}
	size = (uint32_t)(all->data & ~(uint64_t)RX_CLS_LOC_SPECIAL);
	if (!size || size > DM_STEER_MAX_RULES)
		size = DM_STEER_MAX_RULES;
	for (loc = 0; loc < size; loc++) {
		for (i = 0; i < all->rule_cnt && i < n; i++)
			if (all->rule_locs[i] == loc)
				break;
		if (i == all->rule_cnt || i == n)
			break;
	}
	free(all);
	return loc < size ? (int)loc : -ENOSPC;
}

static void fill_spec(struct ethtool_rx_flow_spec *fs, const struct sockaddr_storage *local,
		      const struct sockaddr_storage *peer, unsigned queue)
{
	memset(fs, 0, sizeof(*fs));
	fs->ring_cookie = queue;
	if (local->ss_family == AF_INET) {
		const struct sockaddr_in *l = (const struct sockaddr_in *)local;
		const struct sockaddr_in *p = (const struct sockaddr_in *)peer;

		fs->flow_type = TCP_V4_FLOW;
		fs->h_u.tcp_ip4_spec.ip4src = p->sin_addr.s_addr;
		fs->h_u.tcp_ip4_spec.ip4dst = l->sin_addr.s_addr;
		fs->h_u.tcp_ip4_spec.psrc = p->sin_port;
		fs->h_u.tcp_ip4_spec.pdst = l->sin_port;
		fs->m_u.tcp_ip4_spec.ip4src = 0xffffffffu;
		fs->m_u.tcp_ip4_spec.ip4dst = 0xffffffffu;
		fs->m_u.tcp_ip4_spec.psrc = 0xffff;
		fs->m_u.tcp_ip4_spec.pdst = 0xffff;
	} else {
		const struct sockaddr_in6 *l = (const struct sockaddr_in6 *)local;
		const struct sockaddr_in6 *p = (const struct sockaddr_in6 *)peer;

		fs->flow_type = TCP_V6_FLOW;
		memcpy(fs->h_u.tcp_ip6_spec.ip6src, &p->sin6_addr, 16);
		memcpy(fs->h_u.tcp_ip6_spec.ip6dst, &l->sin6_addr, 16);
		fs->h_u.tcp_ip6_spec.psrc = p->sin6_port;
		fs->h_u.tcp_ip6_spec.pdst = l->sin6_port;
		memset(fs->m_u.tcp_ip6_spec.ip6src, 0xff, 16);
		memset(fs->m_u.tcp_ip6_spec.ip6dst, 0xff, 16);
		fs->m_u.tcp_ip6_spec.psrc = 0xffff;
		fs->m_u.tcp_ip6_spec.pdst = 0xffff;
	}
}

static atomic_int unsafe_said;	/* the process has warned of an unsafe lock */

/* An unsafe lock turns devmem RX off for every job on the host: say so once
 * as a warning, besides each connection's reason at INFO. */
static int steer_lock_unsafe(const char *why)
{
	if (!atomic_exchange(&unsafe_said, 1))
		DM_WARN("devmem RX steering refused: %s", why);
	return -EPERM;
}

/* Opens the interface's lock file, creating it (and its directory) when
 * missing.  Refused, saying why, when a user other than root or us could
 * hold it or swap it: the directory writable by others, the file readable
 * by everyone, or either owned by another user. */
static int steer_lock_open(const char *ifname, char *why, size_t wl)
{
	char name[32 + IF_NAMESIZE];
	uid_t me = geteuid();
	struct stat st;
	int dir, lock, err;

	if (mkdir(DM_STEER_DIR, 0700) && errno != EEXIST) {
		err = -errno;
		snprintf(why, wl, "the steering lock's directory %s: %s", DM_STEER_DIR,
			 strerror(-err));
		return err;
	}
	dir = open(DM_STEER_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dir < 0) {
		err = -errno;
		snprintf(why, wl, "the steering lock's directory %s: %s", DM_STEER_DIR,
			 strerror(-err));
		return err;
	}
	if (fstat(dir, &st)) {
		err = -errno;
		snprintf(why, wl, "the steering lock's directory %s: %s", DM_STEER_DIR,
			 strerror(-err));
		close(dir);
		return err;
	}
	if ((st.st_uid && st.st_uid != me) || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		snprintf(why, wl, "the steering lock's directory %s is owned by uid %u or "
			 "writable by others (mode %04o), so any user could hold it: make it "
			 "root's, mode 0700 or 0750", DM_STEER_DIR, (unsigned)st.st_uid,
			 (unsigned)st.st_mode & 07777);
		close(dir);
		return steer_lock_unsafe(why);
	}
	snprintf(name, sizeof(name), DM_STEER_LOCK_NAME, ifname);
	/* O_NONBLOCK: whatever sits there, the open does not wait */
	lock = openat(dir, name, O_RDONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
	if (lock < 0) {
		err = -errno;
		snprintf(why, wl, "the steering lock %s/%s: %s", DM_STEER_DIR, name,
			 strerror(-err));
		close(dir);
		return err;
	}
	if (fstat(lock, &st)) {
		err = -errno;
		snprintf(why, wl, "the steering lock %s/%s: %s", DM_STEER_DIR, name,
			 strerror(-err));
	} else if (!S_ISREG(st.st_mode) || st.st_nlink != 1) {
		err = -EPERM;
		snprintf(why, wl, "the steering lock %s/%s is not a plain file (mode %06o, "
			 "%u links): remove it", DM_STEER_DIR, name, (unsigned)st.st_mode,
			 (unsigned)st.st_nlink);
	} else if ((st.st_uid && st.st_uid != me) || (st.st_mode & (S_IROTH | S_IWOTH))) {
		err = -EPERM;
		snprintf(why, wl, "the steering lock %s/%s is owned by uid %u or open to every "
			 "user (mode %04o), so any user could hold it: remove it", DM_STEER_DIR,
			 name, (unsigned)st.st_uid, (unsigned)st.st_mode & 07777);
	} else {
		close(dir);
		return lock;
	}
	if (err == -EPERM)
		steer_lock_unsafe(why);
	close(lock);
	close(dir);
	return err;
}

/* Held from the lock file's open to its close.  A child forked meanwhile
 * would share the open file, and the flock() with it, for as long as it
 * lives (a data loader worker: the whole job): fork() waits for it. */
static pthread_mutex_t lock_held = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t fork_guard_once = PTHREAD_ONCE_INIT;

static void fork_prepare(void)
{
	pthread_mutex_lock(&lock_held);
}

static void fork_done(void)
{
	pthread_mutex_unlock(&lock_held);
}

static void fork_guard_init(void)
{
	pthread_atfork(fork_prepare, fork_done, fork_done);
}

static int steer_add_locked(const char *ifname, const struct sockaddr_storage *local,
			    const struct sockaddr_storage *peer, unsigned queue, int *loc_out,
			    char *why, size_t wl);

int dm_steer_add(const char *ifname, int fd, unsigned queue, int *loc_out, char *why,
		 size_t wl)
{
	struct sockaddr_storage local, peer;
	socklen_t ll = sizeof(local), pl = sizeof(peer);
	int r;

	*loc_out = -1;
	if (getsockname(fd, (struct sockaddr *)&local, &ll) ||
	    getpeername(fd, (struct sockaddr *)&peer, &pl)) {
		r = -errno;
		snprintf(why, wl, "%s", strerror(-r));
		return r;
	}
	return dm_steer_add_flow(ifname, &local, &peer, queue, loc_out, why, wl);
}

int dm_steer_add_flow(const char *ifname, const struct sockaddr_storage *local,
		      const struct sockaddr_storage *peer, unsigned queue, int *loc_out,
		      char *why, size_t wl)
{
	int r;

	*loc_out = -1;
	if (local->ss_family != peer->ss_family ||
	    (local->ss_family != AF_INET && local->ss_family != AF_INET6)) {
		snprintf(why, wl, "not a TCP/IP socket");
		return -EAFNOSUPPORT;
	}
	pthread_once(&fork_guard_once, fork_guard_init);
	pthread_mutex_lock(&lock_held);
	r = steer_add_locked(ifname, local, peer, queue, loc_out, why, wl);
	pthread_mutex_unlock(&lock_held);
	return r;
}

static int steer_add_locked(const char *ifname, const struct sockaddr_storage *local,
			    const struct sockaddr_storage *peer, unsigned queue, int *loc_out,
			    char *why, size_t wl)
{
	struct ethtool_rxnfc ins;
	int lock, loc, r, tries;

	lock = steer_lock_open(ifname, why, wl);
	if (lock < 0)
		return lock;
	/* accept() must not wait: a few tries, then copy mode */
	for (tries = 0; flock(lock, LOCK_EX | LOCK_NB); tries++) {
		if ((errno != EWOULDBLOCK && errno != EINTR) || tries == 20) {
			r = errno == EINTR ? -EWOULDBLOCK : -errno;
			close(lock);
			snprintf(why, wl, "%s", r == -EWOULDBLOCK ?
				 "the steering lock is busy" : strerror(-r));
			return r;
		}
		usleep(1000);
	}
	loc = free_location(ifname);
	r = loc;
	if (loc >= 0) {
		memset(&ins, 0, sizeof(ins));
		ins.cmd = ETHTOOL_SRXCLSRLINS;
		fill_spec(&ins.fs, local, peer, queue);
		ins.fs.location = (uint32_t)loc;
		r = ethtool_ioctl(ifname, &ins);
		if (!r)
			*loc_out = loc;
	}
	close(lock);	/* and the lock with it */
	if (r)
		snprintf(why, wl, "%s", strerror(-r));
	return r;
}

int dm_steer_del_flow(const char *ifname, int loc, const struct sockaddr_storage *local,
		      const struct sockaddr_storage *peer)
{
	struct ethtool_rxnfc del = { .cmd = ETHTOOL_SRXCLSRLDEL };
	struct ethtool_rxnfc get = { .cmd = ETHTOOL_GRXCLSRULE };
	struct ethtool_rx_flow_spec want;
	int r;

	if (loc < 0)
		return 0;
	/* only our rule: another program may have reused the location */
	get.fs.location = (uint32_t)loc;
	r = ethtool_ioctl(ifname, &get);
	if (r == -EINVAL || r == -ENOENT)
		return -ENOENT;	/* no rule there (igb says EINVAL) */
	if (r)
		return r;	/* unknown: not "gone" */
	if (local && peer) {
		fill_spec(&want, local, peer, (unsigned)get.fs.ring_cookie);
		if ((get.fs.flow_type & ~(FLOW_EXT | FLOW_MAC_EXT | FLOW_RSS)) != want.flow_type ||
		    memcmp(&get.fs.h_u, &want.h_u, sizeof(want.h_u)))
			return -ESTALE;
	}
	del.fs.location = (uint32_t)loc;
	return ethtool_ioctl(ifname, &del);
}

int dm_steer_del(const char *ifname, int fd, int loc)
{
	struct sockaddr_storage local, peer;
	socklen_t ll = sizeof(local), pl = sizeof(peer);

	if (fd >= 0 && !getsockname(fd, (struct sockaddr *)&local, &ll) &&
	    !getpeername(fd, (struct sockaddr *)&peer, &pl))
		return dm_steer_del_flow(ifname, loc, &local, &peer);
	return dm_steer_del_flow(ifname, loc, NULL, NULL);
}

int dm_ethtool_rules_to(const char *ifname, const unsigned *queues, int n)
{
	struct ethtool_rxnfc cnt = { .cmd = ETHTOOL_GRXCLSRLCNT };
	struct ethtool_rxnfc *all;
	uint32_t i;
	int r, j, hits = 0;

	r = ethtool_ioctl(ifname, &cnt);
	if (r == -EOPNOTSUPP)
		return 0;	/* no rules at all */
	if (r)
		return r;
	if (cnt.rule_cnt > DM_STEER_MAX_RULES)
		return -E2BIG;
	all = calloc(1, sizeof(*all) + (cnt.rule_cnt + 1) * sizeof(uint32_t));
	if (!all)
		return -ENOMEM;
	all->cmd = ETHTOOL_GRXCLSRLALL;
	all->rule_cnt = cnt.rule_cnt;
	r = ethtool_ioctl(ifname, all);
	for (i = 0; !r && i < all->rule_cnt && i < cnt.rule_cnt; i++) {
		struct ethtool_rxnfc get = { .cmd = ETHTOOL_GRXCLSRULE };

		get.fs.location = all->rule_locs[i];
		r = ethtool_ioctl(ifname, &get);
		for (j = 0; !r && j < n; j++)
			if (get.fs.ring_cookie == queues[j])
				hits++;
	}
	free(all);
	return r ? r : hits;
}
