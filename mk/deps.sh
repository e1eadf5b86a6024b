#!/bin/bash
# Install what the build and the guest need, from Debian's archive only.
# Idempotent: does nothing when everything is already there.
set -euo pipefail

PKGS=(linux-source-6.1 build-essential bc bison flex libelf-dev libssl-dev
      dwarves cpio xz-utils rsync ccache git python3 kmod
      iproute2 iputils-ping ethtool tcpdump socat procps util-linux
      busybox-static gnuplot-nox nftables
      debootstrap linux-config-6.1 e2fsprogs dpkg-dev fakeroot openssl
      clang llvm lld libbpf-dev python3-yaml liburing-dev
      patch python3-ply python3-git)
BACKPORTS_LIST=/etc/apt/sources.list.d/devmem-bookworm-backports.list
QEMU_MIN=8.2

missing=()
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
		missing+=("$p")
done

qemu_ok() {
	command -v qemu-system-x86_64 >/dev/null || return 1
	local v
	v=$(qemu-system-x86_64 --version | sed -n 's/.*version \([0-9]*\.[0-9]*\).*/\1/p')
	[ "$(printf '%s\n%s\n' "$QEMU_MIN" "$v" | sort -V | head -1)" = "$QEMU_MIN" ] &&
		# (no grep -q: under pipefail, qemu killed by SIGPIPE would fail it)
		qemu-system-x86_64 -device help 2>/dev/null | grep '"igb"' > /dev/null
}

need_qemu=0
qemu_ok || need_qemu=1

if [ ${#missing[@]} -eq 0 ] && [ $need_qemu -eq 0 ]; then
	exit 0
fi

if [ "$(id -u)" != 0 ]; then
	echo "deps: missing ${missing[*]} ${need_qemu:+qemu>=$QEMU_MIN}; run as root" >&2
	exit 1
fi

export DEBIAN_FRONTEND=noninteractive
if [ $need_qemu -eq 1 ] && [ ! -f "$BACKPORTS_LIST" ]; then
	echo "deb http://deb.debian.org/debian bookworm-backports main" > "$BACKPORTS_LIST"
fi
echo "deps: installing ${missing[*]} ${need_qemu:+qemu-system-x86 (bookworm-backports)}"
apt-get update -qq
if [ ${#missing[@]} -gt 0 ]; then
	apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
if [ $need_qemu -eq 1 ]; then
	apt-get install -y -qq --no-install-recommends -t bookworm-backports \
		qemu-system-x86 qemu-utils
	qemu_ok || { echo "deps: QEMU >= $QEMU_MIN with igb not available" >&2; exit 1; }
fi
