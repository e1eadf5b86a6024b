#!/bin/bash
# As root, the scripts that delete, extract into, format, lock or share
# build/ refuse a build directory that another user controls, before they
# touch anything (mk/safe-build.sh).  nobody plants symbolic links to
# root's files in a build directory of its own, in a subdirectory of a
# root-owned one, as a lock file, and as the build directory itself in a
# sticky directory; mk/deb.sh, mk/deb-rootfs.sh, mk/check-deb.sh, vm/run
# and make clean must exit saying "refusing to run as root", and root's
# files stay as they were.  A root-owned build directory still works.
# Stubs stand in for debootstrap, qemu-system-x86_64 and flock, so that a
# script that did not refuse stops right after the damage: nothing is
# downloaded, built or booted.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
realbuild=${BUILD:-$top/build}
if [ "$(id -u)" != 0 ]; then
	echo "not root: the checks are for root, nothing to test"
	exit 0
fi
user=nobody
group=$(id -gn "$user") || exit 1
as_user() { setpriv --reuid="$user" --regid="$group" --clear-groups -- "$@"; }

tmp=$(mktemp -d /tmp/devmem-safe.XXXXXX) || exit 1
trap 'rm -rf --one-file-system "$tmp"' EXIT
chmod 0755 "$tmp"

# Root's files: what a script steered through a link would delete or write.
victim=$tmp/victim
plant_victim() {
	rm -rf --one-file-system "$victim"
	mkdir -p "$victim/dir/root/etc" "$victim/dir/debug" "$victim/dir/check/root"
	echo precious > "$victim/file"
	for f in dir/root/etc/passwd dir/debug/status dir/debug/cmd dir/check/root/x; do
		echo "root's $f" > "$victim/$f"
	done
}
state() {
	(cd "$victim" && find . -printf '%p %y %m %U %s\n' | LC_ALL=C sort &&
		find . -type f -print0 | LC_ALL=C sort -z | xargs -0 cat) | sha1sum
}
plant_victim
before=$(state)

stubs=$tmp/stubs
mkdir "$stubs"
for p in debootstrap qemu-system-x86_64 flock; do
	printf '#!/bin/sh\necho "%s $*" >> "%s/ran"\nexit 1\n' "$p" "$tmp" > "$stubs/$p"
	chmod 0755 "$stubs/$p"
done
kernel=$tmp/bzImage
echo "not a kernel" > "$kernel"
fake_debs() { # DIR: what check-deb looks for before it starts
	touch "$1/linux-image-6.1.0-devmem_1_amd64.deb" "$1/devmem-tools_1_amd64.deb"
	echo 1 > "$1/VERSION"
	echo guest > "$1/CONFIG"
}

fail=0
# run BUILD COMMAND...: as root, with BUILD, in the checkout; sets out, rc.
run() {
	local b=$1
	shift
	rm -f "$tmp/ran"
	out=$(cd "$top" && BUILD=$b PATH=$stubs:$PATH DEB_CONFIG=guest "$@" 2>&1 < /dev/null)
	rc=$?
}
report_fail() { # WHAT WHY
	echo "FAIL: $1: $2 (exit $rc)"
	sed 's/^/  | /' <<< "$out"
	[ -e "$tmp/ran" ] && sed 's/^/  ran: /' "$tmp/ran"
	fail=1
}
# refused WHAT BUILD COMMAND...: must refuse, run nothing, change nothing.
refused() {
	local what=$1
	shift
	plant_victim
	run "$@"
	if [ "$(state)" != "$before" ]; then
		report_fail "$what" "root's files in $victim changed"
	elif [ -e "$tmp/ran" ]; then
		report_fail "$what" "it went on to run a program"
	elif [ "$rc" = 0 ] || ! grep -q 'refusing to run as root' <<< "$out"; then
		report_fail "$what" "no refusal"
	else
		echo "ok: $what: $(grep -m1 'refusing to run as root' <<< "$out")"
	fi
}

# 1. A build directory of nobody's, full of links to root's files.
ub=$tmp/user-build
mkdir "$ub"
chown "$user:$group" "$ub"
as_user sh -c '
	ln -s "$2/file" "$1/deb.lock"
	ln -s "$2/dir" "$1/deb-rootfs"
	ln -s "$2/dir" "$1/vm"
	ln -s "$3/linux" "$1/linux"
	mkdir "$1/deb" && ln -s "$2/dir" "$1/deb/check"' sh "$ub" "$victim" "$realbuild" ||
	{ echo "cannot plant the links as $user"; exit 1; }
fake_debs "$ub/deb"
chown -R "$user:$group" "$ub/deb"
refused "safe_build, nobody's build directory" "$ub" \
	bash -c '. mk/safe-build.sh && safe_build test "$BUILD"'
refused "mk/deb.sh, nobody's build directory" "$ub" mk/deb.sh
refused "mk/deb-rootfs.sh, nobody's build directory" "$ub" mk/deb-rootfs.sh
refused "mk/check-deb.sh, nobody's build directory" "$ub" mk/check-deb.sh
refused "vm/run, nobody's build directory" "$ub" vm/run -k "$kernel" -- true
refused "make clean, BUILD through nobody's link with a trailing /" "$tmp/none" \
	make -s -C "$top" clean BUILD="$ub/deb/check/"

# 2. Root's build directory, one thing in it nobody's.
rb1=$tmp/root-build1
mkdir -p "$rb1/deb-rootfs"
chown "$user:$group" "$rb1/deb-rootfs"
as_user sh -c 'ln -s "$2/file" "$1/debootstrap.log"; ln -s "$2/dir/root" "$1/root"' \
	sh "$rb1/deb-rootfs" "$victim"
refused "mk/deb-rootfs.sh, nobody's build/deb-rootfs" "$rb1" mk/deb-rootfs.sh
rb2=$tmp/root-build2
mkdir -p "$rb2/vm/debug"
chown "$user:$group" "$rb2/vm/debug"
as_user sh -c 'ln -s "$2/file" "$1/cmd"; ln -s "$2/dir/debug/status" "$1/status"' \
	sh "$rb2/vm/debug" "$victim"
refused "vm/run, nobody's log directory" "$rb2" vm/run -k "$kernel" -- true
rb3=$tmp/root-build3
mkdir -p "$rb3/deb"
fake_debs "$rb3/deb"
ln -s "$victim/file" "$rb3/deb.lock"
chown -h "$user:$group" "$rb3/deb.lock"
refused "mk/check-deb.sh, nobody's link as build/deb.lock" "$rb3" mk/check-deb.sh
refused "mk/deb.sh, nobody's link as build/deb.lock" "$rb3" mk/deb.sh

# 3. The build directory itself a link of nobody's, in a sticky directory.
sticky=$tmp/sticky
mkdir -m 1777 "$sticky"
as_user ln -s "$victim/dir" "$sticky/build"
refused "vm/run, build/ a link of nobody's in a sticky directory" "$sticky/build" \
	vm/run -k "$kernel" -- true

# 4. Root's own build directories still work.
plant_victim
run "$sticky/new-build" bash -c '. mk/safe-build.sh && safe_build test "$BUILD" deb deb.lock &&
	stat -c "%U %a" "$BUILD"'
if [ "$rc" = 0 ] && [ "$out" = "root 755" ]; then
	echo "ok: safe_build made a missing build directory in a sticky one, root's"
else
	report_fail "safe_build, a new build directory" "not made root's"
fi
if [ -d "$realbuild" ]; then
	run "$realbuild" bash -c '. mk/safe-build.sh && safe_build test "$BUILD" linux deb deb.lock'
	[ "$rc" = 0 ] && echo "ok: safe_build takes $realbuild" ||
		report_fail "safe_build, $realbuild" "refused"
fi
ok=$tmp/ok-build
mkdir "$ok"
run "$ok" mk/deb-rootfs.sh
if grep -q '^debootstrap ' "$tmp/ran" 2> /dev/null && ! grep -q refusing <<< "$out"; then
	echo "ok: mk/deb-rootfs.sh in root's build directory goes on to debootstrap"
else
	report_fail "mk/deb-rootfs.sh, root's build directory" "did not reach debootstrap"
fi
run "$ok" vm/run -k "$kernel" -- true
if grep -q '^qemu-system-x86_64 ' "$tmp/ran" 2> /dev/null && ! grep -q refusing <<< "$out"; then
	echo "ok: vm/run in root's build directory goes on to QEMU"
else
	report_fail "vm/run, root's build directory" "did not reach QEMU"
fi
ln -s "$victim/dir" "$tmp/root-link"
run "$tmp/none" make -s -C "$top" clean BUILD="$tmp/root-link/"
if [ "$(state)" != "$before" ]; then
	report_fail "make clean BUILD=LINK/" "it removed what the link points at"
elif [ "$rc" != 0 ] || [ -L "$tmp/root-link" ]; then
	report_fail "make clean BUILD=LINK/" "the link is still there"
else
	echo "ok: make clean BUILD=LINK/ removes the link, not what it points at"
fi
run "$tmp/none" make -s -C "$top" clean BUILD="$ok"
if [ "$rc" = 0 ] && [ ! -e "$ok" ]; then
	echo "ok: make clean removes root's build directory"
else
	report_fail "make clean, root's build directory" "not removed"
fi
exit $fail
