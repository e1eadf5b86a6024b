#!/bin/bash
# A minimal Debian 12 for make check-deb, debootstrapped once and cached:
#
#   deb-rootfs.sh      prints the path of build/deb-rootfs/bookworm.tar
#
# minbase plus what the kernel's postinst (initramfs-tools), the devmem
# tools (their dependencies and recommendations) and the demo need, so that
# dpkg -i of the packages needs no network.  The tar is rebuilt only when
# that list changes.  debootstrap runs in a mount namespace of its own, so
# the /proc and /sys it mounts in the new system go away with it, even when
# it is killed.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
cache=$build/deb-rootfs
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
include=systemd-sysv,udev,kmod,initramfs-tools,procps,iproute2,ethtool,iputils-ping
include+=,python3,python3-yaml,liburing2,libbpf1,libelf1,zlib1g
include+=,socat,tcpdump,nftables
tar=$cache/bookworm.tar
key=$(echo "bookworm minbase $include" | sha1sum | cut -d' ' -f1)

[ "$(id -u)" = 0 ] || { echo "deb-rootfs: needs root (debootstrap)" >&2; exit 2; }
# build/ and the cache, where this deletes, debootstraps and archives as
# root, are root's alone (mk/safe-build.sh).
. "$top/mk/safe-build.sh"
safe_build deb-rootfs "$build" deb-rootfs
if [ "$(cat "$tar.key" 2>/dev/null)" != "$key" ]; then
	echo "deb-rootfs: debootstrap bookworm (minbase + $include)" >&2
	root=$cache/root
	rm -rf --one-file-system "$root"
	mkdir -p "$root"
	unshare --mount --propagation private debootstrap --variant=minbase --include="$include" bookworm "$root" \
		"$mirror" > "$cache/debootstrap.log" 2>&1 ||
		{ tail -n 20 "$cache/debootstrap.log" >&2; exit 1; }
	rm -f "$tar" "$tar.key"
	tar -C "$root" -cf "$tar.tmp" .
	mv "$tar.tmp" "$tar"
	rm -rf --one-file-system "$root"
	echo "$key" > "$tar.key"
fi
echo "$tar"
