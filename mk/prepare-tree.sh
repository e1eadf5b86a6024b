#!/bin/bash
# Prepare the kernel source tree under build/linux:
#   1. unpack Debian's linux-source-6.1 once, as git commit "base";
#   2. apply patches/series on top, one commit per patch, without touching
#      files the series does not change (so kbuild rebuilds only what moved);
#   3. copy the files this repo adds (at their kernel paths) into the tree,
#      rewriting only those whose content changed.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
src=$build/linux
tarball=/usr/src/linux-source-6.1.tar.xz
overlay_dirs=(Documentation arch drivers fs include kernel lib mm net tools)

die() { echo "prepare-tree: $*" >&2; exit 1; }

# As root: build/ and the tree, which this deletes and unpacks into, are
# root's alone (mk/safe-build.sh).
. "$top/mk/safe-build.sh"
safe_build prepare-tree "$build" linux

[ -f "$tarball" ] || die "$tarball missing (make deps)"
deb_version=$(dpkg-query -W -f='${Version}' linux-source-6.1)

g() { git -C "$src" "$@"; }

unpack_base() {
	echo "prepare-tree: unpacking linux-source-6.1 $deb_version (once)"
	rm -rf "$src" "$build"/linux-source-6.1 "$build"/obj-*
	mkdir -p "$build"
	tar -xf "$tarball" -C "$build"
	mv "$build"/linux-source-6.1 "$src"
	g init -q -b base-tree
	g config user.name "devmem-6.1 build"
	g config user.email "devmem@localhost"
	g config core.autocrlf false
	g config gc.auto 0
	printf '/.devmem-*\n' >> "$src"/.git/info/exclude
	g add -f -A .
	g commit -q -m "base: Debian linux-source-6.1 $deb_version"
	g tag base
	echo "$deb_version" > "$src"/.devmem-base
}

if [ ! -f "$src"/.devmem-base ] || [ "$(cat "$src"/.devmem-base)" != "$deb_version" ]; then
	unpack_base
fi
kversion=$(make -s -C "$src" kernelversion)

# ---- the series -------------------------------------------------------------
series=$top/patches/series
patch_list() {
	[ -f "$series" ] || return 0
	sed -e 's/#.*//' -e 's/[[:space:]]*$//' "$series" | grep -v '^$' || true
}

want=$( { echo "$deb_version"; patch_list | while read -r p; do
		echo "$p"; cat "$top/patches/$p"; done; } | sha1sum | cut -d' ' -f1)
applied_stamp=$src/.devmem-series
have=$(cat "$applied_stamp" 2>/dev/null || true)

if [ "${1:-}" = --stamp-only ]; then
	# make refresh: the tree's commits were just written to patches/.
	echo "$want $(g rev-parse HEAD)" > "$applied_stamp"
	exit 0
fi

if [ "$want" != "${have%% *}" ]; then
	if [ -n "$have" ] && [ "$(g rev-parse HEAD)" != "${have##* }" ]; then
		die "build/linux has commits that are not in patches/ (make refresh writes them back, or reset build/linux to $(echo "${have##* }" | cut -c1-12))"
	fi
	if ! g diff --quiet HEAD; then
		die "build/linux has uncommitted edits to base files: commit them and run make refresh, or discard them"
	fi
	export GIT_INDEX_FILE=$src/.git/devmem-index
	g read-tree base
	parent=$(g rev-parse base)
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	n=0
	while read -r p; do
		n=$((n + 1))
		[ -f "$top/patches/$p" ] || die "patches/series names $p, which does not exist"
		if ! g apply --cached --whitespace=nowarn "$top/patches/$p" 2>"$tmp/err"; then
			cat "$tmp/err" >&2
			die "patch $n ($p) does not apply to linux-source-6.1 $deb_version (kernel $kversion)"
		fi
		git mailinfo -b "$tmp/msg" "$tmp/diff" < "$top/patches/$p" > "$tmp/info"
		subject=$(sed -n 's/^Subject: //p' "$tmp/info")
		[ -n "$subject" ] || subject=$p
		author=$(sed -n 's/^Author: //p' "$tmp/info")
		email=$(sed -n 's/^Email: //p' "$tmp/info")
		date=$(sed -n 's/^Date: //p' "$tmp/info")
		tree=$(g write-tree)
		# the patch's own author and date, so that make refresh writes
		# back the same patch
		parent=$( { echo "$subject"; echo; cat "$tmp/msg"; } |
			GIT_AUTHOR_NAME=${author:-devmem-6.1} GIT_AUTHOR_EMAIL=${email:-devmem@localhost} \
			GIT_AUTHOR_DATE=${date:-now} \
			g commit-tree "$tree" -p "$parent")
	done < <(patch_list)
	unset GIT_INDEX_FILE
	# Moves the work tree to the new series, rewriting only files that differ.
	g checkout -q -B series "$parent"
	echo "$want $parent" > "$applied_stamp"
	echo "prepare-tree: applied $n patch(es) on linux-source-6.1 $deb_version (kernel $kversion)"
fi

# ---- files the repo adds ----------------------------------------------------
manifest=$src/.devmem-overlay
(cd "$top" && git ls-files -co --exclude-standard -- "${overlay_dirs[@]}") | sort > "$manifest.new"
while read -r f; do
	if g cat-file -e "base:$f" 2>/dev/null; then
		die "$f exists in the 6.1 base: change it with a patch in patches/, not as a file in the repo"
	fi
done < "$manifest.new"
if [ -f "$manifest" ]; then
	comm -23 "$manifest" "$manifest.new" | while read -r f; do rm -f "$src/$f"; done
fi
rsync -rlc --files-from="$manifest.new" "$top"/ "$src"/
mv "$manifest.new" "$manifest"
echo "prepare-tree: base linux-source-6.1 $deb_version (kernel $kversion), $(patch_list | wc -l) patch(es), $(wc -l < "$manifest") added file(s)"
