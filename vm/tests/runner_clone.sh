#!/bin/bash
# A checkout anywhere: a clone under /tmp (a tmpfs in the guest), in a path
# with spaces and a quote, read-only (a bind mount in a mount namespace of
# our own), with its build directory elsewhere, runs a script of its own
# in the guest, from its own directory.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$top/build}
kernel=$build/obj-debug/arch/x86/boot/bzImage
[ -f "$kernel" ] || { echo "no debug kernel at $kernel (make kernel)"; exit 1; }

tmp=$(mktemp -d "/tmp/devmem clone.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
clone="$tmp/check out's"
cbuild="$tmp/build"
git clone -q "$top" "$clone" || exit 1
mkdir -p "$cbuild"

ro=read-only
[ "$(id -u)" = 0 ] || ro=
run_clone() {
	cd "$1" && BUILD="$2" VM_KMEMLEAK=0 VM_TIMEOUT=900 \
		./vm/run -k "$3" -- "$1/vm/checkout-guest.sh" "$2/seen"
}
if [ -n "$ro" ]; then
	export -f run_clone
	unshare -m bash -c 'mount --bind "$1" "$1" &&
		mount -o remount,bind,ro "$1" && run_clone "$@"' \
		sh "$clone" "$cbuild" "$kernel"
else
	echo "not root: the clone stays writable on the host"
	run_clone "$clone" "$cbuild" "$kernel"
fi
rc=$?
echo "vm/run from the clone: exit $rc"
cat "$cbuild/seen" 2>/dev/null
[ $rc = 0 ] || exit 1
# the guest always gets the checkout read-only
want="pwd=$clone
checkout=$clone
readme=readable
mode=read-only"
[ "$(cat "$cbuild/seen")" = "$want" ] || { echo "expected:"; echo "$want"; exit 1; }
[ -s "$cbuild/vm/debug/console.log" ] || { echo "no console.log in the clone's build directory"; exit 1; }
