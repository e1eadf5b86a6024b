#!/bin/bash
# make refresh: write the commits of build/linux (base..HEAD) back to
# patches/, one file per commit, and rewrite patches/series.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
src=${BUILD:-$top/build}/linux
# As root: the tree whose commits this reads is root's alone
# (mk/safe-build.sh).
. "$top/mk/safe-build.sh"
safe_build refresh "${BUILD:-$top/build}" linux
g() { git -C "$src" "$@"; }

[ -d "$src/.git" ] || { echo "refresh: no build/linux (make tree)" >&2; exit 1; }
g diff --quiet HEAD || { echo "refresh: build/linux has uncommitted changes: commit them first" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
g format-patch -q --zero-commit --no-signature --no-numbered -o "$tmp" base..HEAD
# Drop the "NNNN-" prefix git puts on file names: the series file orders.
for p in "$tmp"/*.patch; do
	[ -e "$p" ] || continue
	name=$(basename "$p" | sed 's/^[0-9]*-//')
	mv "$p" "$tmp/$name.new"
	echo "$name" >> "$tmp/series"
done
if [ -f "$tmp/series" ] && [ "$(sort "$tmp/series" | uniq -d)" ]; then
	echo "refresh: two commits have the same subject: $(sort "$tmp/series" | uniq -d)" >&2
	exit 1
fi
rm -f "$top"/patches/*.patch
{
	echo "# devmem TCP for Linux 6.1: one patch a line, applied in order"
	cat "$tmp/series" 2>/dev/null || true
} > "$top/patches/series"
for p in "$tmp"/*.new; do
	[ -e "$p" ] || continue
	mv "$p" "$top/patches/$(basename "$p" .new)"
done
# The tree already is what the series describes: record it as applied.
"$top"/mk/prepare-tree.sh --stamp-only
echo "refresh: $(grep -vc '^#' "$top/patches/series") patch(es) in patches/"
