#!/bin/bash
# make deb: Debian packages of the series, in build/deb/.
#
#   linux-image-KREL, linux-headers-KREL, linux-libc-dev   the kernel's own
#       packaging (bindeb-pkg) from Debian's 6.1 config (linux-config-6.1,
#       amd64_none_amd64) merged with kernel/configs/devmem-host.config;
#       linux-libc-dev carries the devmem uAPI headers
#   devmem-tools   ncdevmem, dmctl, devmem_bench and the devmem selftests,
#       built against those headers, and the NCCL net plugin
#       (libnccl-net-devmem.so) with its harness, for Debian 12
#
# DEB_CONFIG picks the kernel's base configuration:
#   debian (default)  Debian's own config, for real hosts; hours on 2 cores
#   guest             x86_64_defconfig + devmem.config, the test guest's:
#                     only to try the packaging and make check-deb quickly;
#                     its kernel is KREL-guest, its versions end in ~guest
# Each has its own object directory (build/obj-deb, build/obj-deb-guest);
# build/deb/CONFIG says which one the packages in build/deb came from.
#
# KREL is 6.1.N-devmem; every package has version 6.1.N-devmemS.B: the 6.1
# base, the series version S (DEVMEM_SERIES, a number) and the build B
# (commits in this repository, so a later build sorts higher; a shallow
# clone cannot count them).  build/deb/VERSION holds it.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
src=$build/linux
deb_config=${DEB_CONFIG:-debian}
case $deb_config in
debian) obj=$build/obj-deb ;;
guest) obj=$build/obj-deb-guest ;;
*) echo "deb: DEB_CONFIG=$deb_config: debian or guest" >&2; exit 2 ;;
esac
out=$build/deb
jobs=${JOBS:-$(nproc)}
# As root: build/ and what this script deletes, locks or writes there are
# root's alone (mk/safe-build.sh).
. "$top/mk/safe-build.sh"
safe_build deb "$build" linux "${obj##*/}" deb deb.lock deb-headers deb-tools deb-tools-obj

series=${DEVMEM_SERIES:-1}
case $series in
''|*[!0-9]*) echo "deb: DEVMEM_SERIES=$series: a number" >&2; exit 2 ;;
esac
if [ "$(git -C "$top" rev-parse --is-shallow-repository)" = true ]; then
	echo "deb: $top is a shallow clone: the build number counts its commits (git fetch --unshallow)" >&2
	exit 2
fi
base=$(make -s -C "$src" kernelversion)
buildno=$(git -C "$top" rev-list --count HEAD)
version=$base-devmem$series.$buildno
krel=$base-devmem
localversion=
if [ "$deb_config" = guest ]; then
	version+="~guest"
	localversion=-guest
	krel+=$localversion
fi
arch=$(dpkg --print-architecture)
mkdir -p "$obj" "$out"
# make deb and make check-deb share build/deb: one at a time.
exec 9> "$build/deb.lock"
flock -n 9 || { echo "deb: another make deb or make check-deb is running" >&2; exit 2; }

# Kernel configuration (mk/deb-config.sh), and the release it gives.
# LOCALVERSION (set, even empty) keeps setlocalversion from appending "+"
# for the git tree in build/linux.
kernelrelease=$("$top"/mk/deb-config.sh "$src" "$obj" "$deb_config" "$localversion")
[ "$kernelrelease" = "$krel" ] ||
	{ echo "deb: kernel release would be $kernelrelease, not $krel" >&2; exit 1; }
echo "deb: building $krel ($version) in $obj with $jobs job(s)"
rm -f "$build"/linux-*_"$version"_*.deb "$out"/*.deb "$out"/VERSION "$out"/CONFIG
export DEBEMAIL=${DEBEMAIL:-"devmem-6.1 team <devmem-6.1@localhost>"}
make -s -C "$src" O="$obj" -j"$jobs" LOCALVERSION="$localversion" \
	KDEB_PKGVERSION="$version" KDEB_SOURCENAME=linux-devmem \
	KDEB_COMPRESS=xz DPKG_FLAGS=-d bindeb-pkg > "$obj/.devmem-deb.log" 2>&1 ||
	{ tail -n 40 "$obj/.devmem-deb.log" >&2; exit 1; }
[ "$(cat "$obj/include/config/kernel.release")" = "$krel" ] ||
	{ echo "deb: kernel release is $(cat "$obj/include/config/kernel.release"), not $krel" >&2; exit 1; }
mv "$build"/linux-*_"$version"_*.deb "$out"/
rm -f "$build"/linux-devmem_"$version"_*.buildinfo "$build"/linux-devmem_"$version"_*.changes

# The user tools, built against the headers linux-libc-dev installs.
hdr=$build/deb-headers
tools=$build/deb-tools
rm -rf "$hdr" "$tools" "$build"/deb-tools-obj
make -s -C "$src" O="$obj" INSTALL_HDR_PATH="$hdr" headers_install > /dev/null
make -s -C "$src"/tools/testing/selftests TARGETS=net/devmem \
	O="$build"/deb-tools-obj INSTALL_PATH="$tools/selftests" \
	KHDR_INCLUDES="-isystem $hdr/include" install > /dev/null
# The NCCL net plugin and its harness (no CUDA or NCCL needed to build).
make -s -C "$top/nccl-net-devmem" O="$tools/nccl" WERROR= all > /dev/null
"$top"/mk/deb-tools.sh "$tools" "$version" "$arch" "$out" "$krel"

echo "$version" > "$out"/VERSION
echo "$deb_config" > "$out"/CONFIG
echo "deb: packages in $out:"
(cd "$out" && ls -1 ./*.deb | sed 's|^\./|  |')
