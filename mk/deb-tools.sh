#!/bin/bash
# The devmem-tools package (called by mk/deb.sh):
#
#   deb-tools.sh TOOLS_DIR VERSION ARCH OUT_DIR KREL
#
# TOOLS_DIR/selftests holds the installed devmem selftests (kselftest
# layout), TOOLS_DIR/nccl the NCCL net plugin's build.  The package puts
# ncdevmem, dmctl and devmem_bench in /usr/bin, the selftests in
# /usr/lib/devmem-tools/selftests, the demo as /usr/bin/devmem-demo, the
# plugin in the multiarch library directory (NCCL_NET_PLUGIN=devmem finds
# it there) and its harness in /usr/lib/devmem-tools/nccl; its
# dependencies come from dpkg-shlibdeps.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
tools=$1 version=$2 arch=$3 out=$4 krel=$5
pkg=devmem-tools
stage=$tools/stage
libdir=/usr/lib/$pkg
# As root: what this deletes and packs is root's alone (mk/safe-build.sh).
. "$top/mk/safe-build.sh"
safe_build deb-tools "$tools" stage shlibdeps
safe_build deb-tools "$out"

# The programs link against the build host's libraries: the package is for
# the release the host runs.
if [ "$(. /etc/os-release && echo "${VERSION_CODENAME:-}")" != bookworm ]; then
	echo "deb-tools: warning: not built on Debian 12 (bookworm): $pkg is for $(. /etc/os-release && echo "$PRETTY_NAME")" >&2
fi
rm -rf "$stage"
multiarch=$(dpkg-architecture -a"$arch" -qDEB_HOST_MULTIARCH)
mkdir -p "$stage/DEBIAN" "$stage/usr/bin" "$stage/usr/sbin" "$stage$libdir/nccl" \
	"$stage/usr/lib/$multiarch" "$stage/usr/share/doc/$pkg"
cp -a "$tools/selftests" "$stage$libdir/"
for prog in ncdevmem dmctl devmem_bench; do
	ln -s "$libdir/selftests/net/devmem/$prog" "$stage/usr/bin/$prog"
done
install -m 0755 "$top/vm/demo-guest.sh" "$stage$libdir/demo.sh"
sed "s|@LIBDIR@|$libdir|g" "$top/mk/devmem-demo.in" > "$stage/usr/bin/devmem-demo"
chmod 0755 "$stage/usr/bin/devmem-demo"
gzip -9n < "$top/Documentation/networking/devmem.rst" > "$stage/usr/share/doc/$pkg/devmem.rst.gz"
install -m 0644 "$tools/nccl/libnccl-net-devmem.so" "$stage/usr/lib/$multiarch/"
install -m 0755 "$tools/nccl/nccl_harness" "$stage$libdir/nccl/"
install -m 0755 "$tools/nccl/nccl-devmem-helper" "$stage/usr/sbin/"
gzip -9n < "$top/nccl-net-devmem/README.md" > "$stage/usr/share/doc/$pkg/nccl-net-devmem.md.gz"
cat > "$stage/usr/share/doc/$pkg/copyright" <<'EOF'
The devmem TCP selftests and tools for Linux 6.1.
License: GPL-2.0 (see /usr/share/common-licenses/GPL-2)
EOF

# dpkg-shlibdeps wants a debian/control next to it.
elves=()
while IFS= read -r -d '' f; do
	[ "$(head -c 4 "$f" | od -An -c | tr -d ' ')" = '177ELF' ] && elves+=("$f")
done < <(find "$stage$libdir" -type f -perm -u+x -print0)
elves+=("$stage/usr/lib/$multiarch/libnccl-net-devmem.so")
elves+=("$stage/usr/sbin/nccl-devmem-helper")
shlib=$tools/shlibdeps
mkdir -p "$shlib/debian"
printf 'Source: %s\n\nPackage: %s\nArchitecture: any\n' "$pkg" "$pkg" > "$shlib/debian/control"
deps=$(cd "$shlib" && dpkg-shlibdeps -O "${elves[@]}" |
	sed -n 's/^shlibs:Depends=//p')

# a library in the multiarch directory: ldconfig runs after dpkg
echo 'activate-noawait ldconfig' > "$stage/DEBIAN/triggers"
cat > "$stage/DEBIAN/control" <<EOF
Package: $pkg
Version: $version
Architecture: $arch
Maintainer: devmem-6.1 team <devmem-6.1@localhost>
Installed-Size: $(du -sk --apparent-size "$stage" | cut -f1)
Depends: $deps, iproute2, ethtool, iputils-ping, procps, python3, python3-yaml
Recommends: linux-image-$krel, socat, tcpdump, nftables
Section: net
Priority: optional
Description: devmem TCP tools and tests for Linux 6.1
 ncdevmem (mainline's options) receives TCP payload into a dma-buf and
 sends from one; dmctl sets igb's header split; devmem_bench measures; the
 devmem selftests run on two igb ports wired back to back;
 libnccl-net-devmem.so is an NCCL net plugin on the devmem ABI
 (NCCL_NET_PLUGIN=devmem NCCL_NET=devmem).  Needs the
 linux-image-*-devmem kernel of the same series.
EOF
(cd "$stage" && find usr -type f -print0 | sort -z | xargs -0 md5sum) \
	> "$stage/DEBIAN/md5sums"
dpkg-deb --root-owner-group -Zxz --build "$stage" \
	"$out/${pkg}_${version}_${arch}.deb" > /dev/null
