#!/bin/bash
# make series-check: the series of build/series, as a reviewer takes it.
#
#   1. git am onto the pinned base in a clean work tree
#      (build/series-check/linux, a worktree of build/linux at "base");
#   2. the result must be exactly the tree make builds: build/linux's
#      patches plus the files the repo adds;
#   3. the kernel builds at every patch (CONFIG_NET_DEVMEM on from the
#      patch that adds it; incremental, and through make with ccache),
#      and the last patch also with it off; any compiler warning fails.
#      The configuration is allnoconfig plus mk/series-check.config: small,
#      but compiling every line the series changes;
#   4. checkpatch --strict is clean on every patch;
#   5. scripts/kernel-doc -v is clean on every kernel file the series adds.
#
# SERIES_CHECK_FROM=N starts the builds at patch N; SERIES_CHECK_BUILDS=0
# skips them (the other checks still run).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
src=$build/linux
series=$build/series
work=$build/series-check
tree=$work/linux
obj=$work/obj
jobs=${JOBS:-$(nproc)}
from=${SERIES_CHECK_FROM:-1}
fragment=$top/mk/series-check.config

die() { echo "series-check: $*" >&2; exit 1; }
# As root: what this deletes and builds in is root's alone
# (mk/safe-build.sh).
. "$top/mk/safe-build.sh"
safe_build series-check "$build" linux series series-check series-check/linux series-check/obj
t() { git -C "$tree" "$@"; }
now() { date +%s; }

mails=()
for m in "$series"/[0-9][0-9][0-9][0-9]-*.patch; do
	[ -e "$m" ] || continue
	case ${m##*/} in 0000-*) ;; *) mails+=("${m##*/}") ;; esac
done
[ "${#mails[@]}" -gt 0 ] || die "no series in $series (make series)"
mkdir -p "$work" "$obj"
failed=0
start=$(now)

# ---- 1. git am onto the base ------------------------------------------------
# (a worktree of an earlier build/linux, one unpacked again since, is gone)
if ! t rev-parse --verify -q base > /dev/null 2>&1 ||
   [ "$(t rev-parse base)" != "$(git -C "$src" rev-parse base)" ]; then
	rm -rf "$tree" "$obj"
	mkdir -p "$obj"
	git -C "$src" worktree prune
	git -C "$src" worktree add -q --detach "$tree" base
fi
t am --abort > /dev/null 2>&1 || true
t checkout -q -f --detach base
t clean -q -fdx
t -c user.name="devmem-6.1 series-check" -c user.email=devmem@localhost \
	am -q --keep-cr "${mails[@]/#/$series/}" > "$work/am.log" 2>&1 ||
	{ cat "$work/am.log" >&2; die "git am of $series onto the base failed"; }
# what a reviewer's git am would warn about (whitespace errors)
if [ -s "$work/am.log" ]; then
	cat "$work/am.log" >&2
	echo "series-check: git am warned" >&2
	failed=1
fi
mapfile -t commits < <(t rev-list --reverse base..HEAD)
echo "series-check: git am: ${#commits[@]} patches onto $(t log -1 --format=%s base)"

# ---- 2. the same tree as build/linux --------------------------------------
export GIT_INDEX_FILE=$work/index
g() { git -C "$src" "$@"; }
stamp=$(cat "$src/.devmem-series")
g read-tree "${stamp##* }"
while read -r f; do
	# the mode as the repository has it (make copies content only)
	mode=100644
	[ -x "$top/$f" ] && mode=100755
	g update-index --add --cacheinfo "$mode,$(g hash-object -w --no-filters -- "$src/$f"),$f"
done < "$src/.devmem-overlay"
built=$(g write-tree)
unset GIT_INDEX_FILE
if ! git -C "$src" diff --quiet "$built" "$(t rev-parse 'HEAD^{tree}')"; then
	git -C "$src" diff --stat "$built" "$(t rev-parse 'HEAD^{tree}')" >&2
	die "the series does not give the tree make builds (build/linux plus the added files)"
fi
echo "series-check: identical to build/linux plus the $(wc -l < "$src/.devmem-overlay") added files"

# ---- 3. the kernel at every patch -------------------------------------------
build_at() { # LABEL EXTRA-CONFIG...
	local label=$1 log=$obj/build-$1.log s
	shift
	s=$(now)
	cat "$obj/allnoconfig" "$fragment" "$@" > "$obj/.config"
	# (kconfig says "warning: override" for every fragment line)
	if ! make -s -C "$tree" O="$obj" olddefconfig > "$obj/config-$label.log" 2>&1; then
		cat "$obj/config-$label.log" >&2
		echo "series-check: $label: olddefconfig FAILED" >&2
		failed=1
		return
	fi
	if ! make -s -C "$tree" O="$obj" -j"$jobs" all > "$log" 2>&1; then
		tail -n 30 "$log" >&2
		echo "series-check: $label: the build FAILED (full log $log)" >&2
		failed=1
		return
	fi
	# gcc's and the linker's "FILE:LINE: warning: ...", modpost's "WARNING:"
	if grep -qE ': warning: |^WARNING: ' "$log"; then
		grep -E ': warning: |^WARNING: ' "$log" >&2
		echo "series-check: $label: compiler warnings (full log $log)" >&2
		failed=1
	fi
	printf 'series-check: %-52s built in %4ds, NET_DEVMEM=%s\n' "$label" $(($(now) - s)) \
		"$(sed -n 's/^CONFIG_NET_DEVMEM=//p' "$obj/.config" | grep . || echo off)"
}

if [ "${SERIES_CHECK_BUILDS:-1}" = 1 ]; then
if [ ! -f "$obj/allnoconfig" ]; then
	t checkout -q --detach base
	make -s -C "$tree" O="$obj" allnoconfig > /dev/null
	cp "$obj/.config" "$obj/allnoconfig"
fi
n=${#commits[@]}
for ((i = from; i <= n; i++)); do
	t checkout -q --detach "${commits[$((i - 1))]}"
	build_at "$(printf '%02d' "$i")-$(basename "${mails[$((i - 1))]}" .patch | cut -c6-40)"
done
# at the last patch every option of the fragment must have taken
while IFS= read -r line; do
	case $line in
	CONFIG_*=*) grep -qxF "$line" "$obj/.config" ||
		{ echo "series-check: $line did not take (mk/series-check.config)" >&2; failed=1; } ;;
	esac
done < "$fragment"
build_at "$(printf '%02d' "$n")-NET_DEVMEM-off" "$top"/kernel/configs/devmem-off.config
grep -qx '# CONFIG_NET_DEVMEM is not set' "$obj/.config" ||
	{ echo "series-check: CONFIG_NET_DEVMEM did not go off" >&2; failed=1; }
else
	echo "series-check: SERIES_CHECK_BUILDS=0: no builds"
fi

# ---- 4. checkpatch ----------------------------------------------------------
for m in "${mails[@]}"; do
	# Debian's python3 first: checkpatch's spdxcheck.py needs its python3-ply
	if ! out=$(PATH=/usr/bin:$PATH "$tree"/scripts/checkpatch.pl --strict --no-color -q \
		   "$series/$m" 2>&1) ||
	   [ -n "$out" ]; then
		echo "$out" >&2
		echo "series-check: checkpatch --strict: $m is not clean" >&2
		failed=1
	fi
done
echo "series-check: checkpatch --strict on ${#mails[@]} patches done"

# ---- 5. kernel-doc ----------------------------------------------------------
mapfile -t kfiles < <(grep -E '\.(c|h)$' "$src/.devmem-overlay" | grep -v '^tools/')
# -v: also the missing "Return:" sections; its "info:" lines list what it read
out=$(cd "$tree" || exit 1
      scripts/kernel-doc -none -v "${kfiles[@]}" 2>&1 | grep -v ': info: ' || true) ||
	die "cannot run kernel-doc in $tree"
if [ -n "$out" ]; then
	echo "$out" >&2
	echo "series-check: kernel-doc is not clean" >&2
	failed=1
fi
echo "series-check: kernel-doc -v on ${#kfiles[@]} files done"

echo "series-check: $(($(now) - start)) s in all"
[ $failed = 0 ] || die "FAILED"
echo "series-check: PASS"
