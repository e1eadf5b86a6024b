#!/bin/bash
# The kernel configuration of make deb (called by mk/deb.sh):
#
#   deb-config.sh SRC OBJ debian|guest LOCALVERSION
#
# writes OBJ/.config for the source tree SRC: Debian's amd64 config
# (linux-config-6.1), or x86_64_defconfig + devmem.config with a virtio
# disk and ext4 (guest), then kernel/configs/devmem-host.config over it.
# Only rewritten when Debian's config, the fragment, this script or the
# tree changed, so that a rebuild stays incremental.  Prints the kernel
# release the packages get with that LOCALVERSION (set, even empty, it
# keeps setlocalversion from appending "+" for the git tree in SRC);
# messages go to stderr.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
src=$1 obj=$2 deb_config=$3 localversion=$4
debian_config=/usr/src/linux-config-6.1/config.amd64_none_amd64.xz
fragment=devmem-host.config

case $deb_config in
debian|guest) ;;
*) echo "deb-config: $deb_config: debian or guest" >&2; exit 2 ;;
esac
. "$top/mk/safe-build.sh"
safe_build deb-config "$obj"

config_key=$( {
	echo "$deb_config"
	sha1sum < "$0"
	[ "$deb_config" = guest ] || sha1sum "$debian_config"
	cat "$src/kernel/configs/$fragment"
	git -C "$src" rev-parse HEAD
} | sha1sum | cut -d' ' -f1)
if [ "$(cat "$obj/.devmem-config" 2>/dev/null)" != "$config_key" ]; then
	if [ "$deb_config" = guest ]; then
		echo "deb: config: x86_64_defconfig + devmem.config + $fragment" >&2
		make -s -C "$src" O="$obj" x86_64_defconfig devmem.config \
			> "$obj/.devmem-config.log" 2>&1 ||
			{ cat "$obj/.devmem-config.log" >&2; exit 1; }
		# The test guest boots from 9p; a packaged system from a disk.
		"$src"/scripts/config --file "$obj/.config" -e BLOCK \
			-e VIRTIO_BLK -e EXT4_FS
	else
		echo "deb: config: Debian's amd64 config + $fragment" >&2
		xz -dc "$debian_config" > "$obj/.config"
	fi
	make -s -C "$src" O="$obj" "$fragment" >> "$obj/.devmem-config.log" 2>&1 ||
		{ cat "$obj/.devmem-config.log" >&2; exit 1; }
	while IFS= read -r line; do
		case $line in
		CONFIG_*=*) grep -qxF "$line" "$obj/.config" ||
			{ echo "deb: config: '$line' did not take" >&2; exit 1; } ;;
		esac
	done < "$src/kernel/configs/$fragment"
	echo "$config_key" > "$obj/.devmem-config"
fi

# kernelrelease reads include/config/auto.conf, which a config target
# writes only when it is missing: in a fresh object directory the first
# one (x86_64_defconfig) writes it, before the fragments set LOCALVERSION,
# and none rewrites it after.  syncconfig brings it to .config, as the
# build would; every time, for object directories left stale before.
make -s -C "$src" O="$obj" syncconfig < /dev/null >> "$obj/.devmem-config.log" 2>&1 ||
	{ cat "$obj/.devmem-config.log" >&2; exit 1; }
make -s -C "$src" O="$obj" LOCALVERSION="$localversion" kernelrelease
