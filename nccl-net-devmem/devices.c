// SPDX-License-Identifier: GPL-2.0
/*
 * Device discovery: one device per network interface that is up, has an
 * IPv4 or IPv6 address and is not a loopback, in getifaddrs() order.
 *
 * NCCL_DEVMEM_IFNAME chooses interfaces, as NCCL_SOCKET_IFNAME does: a
 * comma-separated list of name prefixes ("eth,ens"), "=" before the list for
 * exact names ("=eth0,eth1"), "^" before it to exclude ("^docker,virbr").
 * A loopback interface is used only when an include list names it ("lo"),
 * which is how the harness runs on one machine.
 *
 * Properties come from sysfs: pciPath = the PCI device under
 * /sys/devices that /sys/class/net/IF/device resolves to (NULL when the
 * interface has no PCI device: NCCL then treats it as a virtual NIC),
 * speed = /sys/class/net/IF/speed in Mbps (10000 when unknown).
 *
 * Discovery runs once per process under a mutex; the table is read-only
 * afterwards.
 */
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin.h"

#define DM_DEFAULT_SPEED 10000
#define DM_MAX_IFSPEC 32

static pthread_mutex_t dev_lock = PTHREAD_MUTEX_INITIALIZER;
static int dev_done;
static int ndevs;
static struct dm_dev devs[DM_MAX_DEVS];
static int addr_rank[DM_MAX_DEVS];

struct ifspec {
	int set, exclude, exact, n;
	char name[DM_MAX_IFSPEC][IF_NAMESIZE];
};

static void ifspec_parse(struct ifspec *sp, const char *s)
{
	memset(sp, 0, sizeof(*sp));
	if (!s || !*s)
		return;
	sp->set = 1;
	if (*s == '^') {
		sp->exclude = 1;
		s++;
	}
	if (*s == '=') {
		sp->exact = 1;
		s++;
	}
	while (*s && sp->n < DM_MAX_IFSPEC) {
		size_t len = strcspn(s, ",");

		if (len > 0 && len < IF_NAMESIZE) {
			memcpy(sp->name[sp->n], s, len);
			sp->name[sp->n][len] = 0;
			sp->n++;
		} else if (len) {
			DM_WARN("%s: ignoring over-long entry \"%.*s\"", DM_ENV_IFNAME, (int)len, s);
		}
		s += len;
		if (*s == ',')
			s++;
	}
}

static int ifspec_match(const struct ifspec *sp, const char *ifname)
{
	int i;

	for (i = 0; i < sp->n; i++) {
		if (sp->exact ? !strcmp(ifname, sp->name[i]) :
				!strncmp(ifname, sp->name[i], strlen(sp->name[i])))
			return 1;
	}
	return 0;
}

static int ifspec_selects(const struct ifspec *sp, const char *ifname, int loopback)
{
	if (!sp->set || sp->exclude)
		return !loopback && !(sp->set && ifspec_match(sp, ifname));
	return ifspec_match(sp, ifname);
}

/* Lower is better: IPv4, then IPv6 global, then IPv6 link-local. */
static int rank_addr(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return 0;
	if (IN6_IS_ADDR_LINKLOCAL(&((const struct sockaddr_in6 *)sa)->sin6_addr))
		return 2;
	return 1;
}

static void set_addr(struct dm_dev *d, const struct sockaddr *sa)
{
	memset(d->addr, 0, sizeof(d->addr));
	if (sa->sa_family == AF_INET) {
		d->family = 4;
		memcpy(d->addr, &((const struct sockaddr_in *)sa)->sin_addr, 4);
		d->scope_id = 0;
	} else {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;

		d->family = 6;
		memcpy(d->addr, &s6->sin6_addr, 16);
		d->scope_id = s6->sin6_scope_id;
	}
}

static int is_bdf(const char *s, size_t len)
{
	static const char pat[] = "xxxx:xx:xx.x";
	size_t i;

	if (len != sizeof(pat) - 1)
		return 0;
	for (i = 0; i < len; i++) {
		if (pat[i] == 'x' ? !strchr("0123456789abcdef", s[i]) || !s[i] : s[i] != pat[i])
			return 0;
	}
	return 1;
}

/* The deepest PCI function on the device's sysfs path, or NULL. */
static char *pci_path_of(const char *ifname)
{
	char link[128], real[PATH_MAX];
	char *p, *cut = NULL;

	snprintf(link, sizeof(link), "/sys/class/net/%.16s/device", ifname);
	if (!realpath(link, real))
		return NULL;
	for (p = real; *p; ) {
		size_t len;

		while (*p == '/')
			p++;
		len = strcspn(p, "/");
		if (is_bdf(p, len))
			cut = p + len;
		p += len;
	}
	if (!cut)
		return NULL;
	*cut = 0;
	return strdup(real);
}

static int speed_of(const char *ifname)
{
	char path[128];
	FILE *f;
	int v = -1;

	snprintf(path, sizeof(path), "/sys/class/net/%.16s/speed", ifname);
	f = fopen(path, "re");
	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v > 0 ? v : DM_DEFAULT_SPEED;
}

static void discover(void)
{
	struct ifaddrs *ifa, *it;
	struct ifspec spec;
	int i;

	ifspec_parse(&spec, getenv(DM_ENV_IFNAME));
	if (getifaddrs(&ifa)) {
		DM_WARN("getifaddrs failed: %m");
		return;
	}
	for (it = ifa; it; it = it->ifa_next) {
		const struct sockaddr *sa = it->ifa_addr;
		struct dm_dev *d = NULL;

		if (!sa || (sa->sa_family != AF_INET && sa->sa_family != AF_INET6))
			continue;
		if (!(it->ifa_flags & IFF_UP) || strlen(it->ifa_name) >= IF_NAMESIZE)
			continue;
		if (!ifspec_selects(&spec, it->ifa_name, !!(it->ifa_flags & IFF_LOOPBACK)))
			continue;
		for (i = 0; i < ndevs; i++)
			if (!strcmp(devs[i].name, it->ifa_name))
				d = &devs[i];
		if (!d) {
			if (ndevs == DM_MAX_DEVS)
				continue;
			i = ndevs++;
			d = &devs[i];
			memset(d, 0, sizeof(*d));
			strcpy(d->name, it->ifa_name);
			addr_rank[i] = 3;
		}
		if (rank_addr(sa) < addr_rank[i]) {
			addr_rank[i] = rank_addr(sa);
			set_addr(d, sa);
		}
	}
	freeifaddrs(ifa);

	for (i = 0; i < ndevs; i++) {
		struct dm_dev *d = &devs[i];
		char a[INET6_ADDRSTRLEN];

		d->ifindex = (int)if_nametoindex(d->name);
		d->speed = speed_of(d->name);
		d->pci_path = pci_path_of(d->name);
		inet_ntop(d->family == 4 ? AF_INET : AF_INET6, d->addr, a, sizeof(a));
		DM_INFO(NCCL_INIT | NCCL_NET, "dev %d: %s %s speed %d Mbps pci %s, copy mode", i,
			d->name, a, d->speed, d->pci_path ? d->pci_path : "none (virtual)");
	}
	if (!ndevs)
		DM_INFO(NCCL_INIT | NCCL_NET, "no interface is up%s%s", spec.set ? " and matches " : "",
			spec.set ? DM_ENV_IFNAME : " (loopback is used only when named in " DM_ENV_IFNAME ")");
}

int dm_devices_init(void)
{
	int n;

	pthread_mutex_lock(&dev_lock);
	if (!dev_done) {
		discover();
		dev_done = 1;
	}
	n = ndevs;
	pthread_mutex_unlock(&dev_lock);
	return n;
}

const struct dm_dev *dm_dev_get(int dev)
{
	int n = dm_devices_init();

	if (dev < 0 || dev >= n)
		return NULL;
	return &devs[dev];
}
