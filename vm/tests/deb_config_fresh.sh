#!/bin/bash
# make deb's kernel configuration (mk/deb-config.sh, what mk/deb.sh runs
# before it builds) in a fresh, empty object directory, for both
# DEB_CONFIGs: the release must come from the merged config,
# 6.1.N-devmem-guest for the guest's and 6.1.N-devmem for Debian's, not
# from the include/config/auto.conf that the first config target left
# (x86_64_defconfig's, on a fresh clone).  Then once more with that
# auto.conf stale, as an earlier make deb left it: the config is not
# rewritten, and the release must still be right.  Config targets only:
# nothing is compiled but kconfig.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$top/build}
src=$build/linux
[ -f "$src/Makefile" ] || { echo "no kernel tree at $src (make tree)"; exit 1; }
[ -f /usr/src/linux-config-6.1/config.amd64_none_amd64.xz ] ||
	{ echo "no Debian config: linux-config-6.1 is missing (make deps)"; exit 1; }
base=$(make -s -C "$src" kernelversion) || exit 1

tmp=$(mktemp -d /tmp/devmem-deb-config.XXXXXX) || exit 1
trap 'rm -rf --one-file-system "$tmp"' EXIT
fail=0

# release NAME CONFIG LOCALVERSION: mk/deb-config.sh into $tmp/NAME, in the
# background; NAME.rel gets the release, NAME.err the messages.
release() {
	"$top"/mk/deb-config.sh "$src" "$tmp/$1" "$2" "$3" \
		> "$tmp/$1.rel" 2> "$tmp/$1.err" < /dev/null &
}
# expect NAME PID WANT [WHAT]
expect() {
	local got rc
	wait "$2"
	rc=$?
	got=$(cat "$tmp/$1.rel")
	if [ "$rc" = 0 ] && [ "$got" = "$3" ]; then
		echo "ok: $1${4:+ ($4)}: kernel release $got"
	else
		echo "FAIL: $1${4:+ ($4)}: kernel release '$got', not $3 (exit $rc)"
		sed 's/^/  | /' "$tmp/$1.err"
		fail=1
	fi
}

# The two configurations at once (kconfig is built in each).
start=$(date +%s)
release obj-deb-guest guest -guest
guest=$!
release obj-deb debian ""
debian=$!
expect obj-deb-guest "$guest" "$base-devmem-guest" "fresh, DEB_CONFIG=guest"
expect obj-deb "$debian" "$base-devmem" "fresh, Debian's config"

# auto.conf as x86_64_defconfig leaves it, .config and its stamp current.
for obj in obj-deb-guest obj-deb; do
	conf=$tmp/$obj/include/config/auto.conf
	[ -f "$conf" ] || continue
	sed -i -e '/^CONFIG_LOCALVERSION=/d' -e '/^CONFIG_LOCALVERSION_AUTO=/d' "$conf"
	printf 'CONFIG_LOCALVERSION=\nCONFIG_LOCALVERSION_AUTO=y\n' >> "$conf"
done
release obj-deb-guest guest -guest
guest=$!
release obj-deb debian ""
debian=$!
expect obj-deb-guest "$guest" "$base-devmem-guest" "stale auto.conf, DEB_CONFIG=guest"
expect obj-deb "$debian" "$base-devmem" "stale auto.conf, Debian's config"
grep -q '^deb: config:' "$tmp"/obj-deb-guest.err &&
	{ echo "FAIL: the guest's config was written again though nothing changed"; fail=1; }
echo "$(( $(date +%s) - start ))s"
exit $fail
