#!/bin/bash
# make series: the series as mails, in build/series/, for git am onto the
# pinned base (Debian's linux-source-6.1, the "base" commit of build/linux).
#
# The working form is patches/series (edits to 6.1 files, one patch each)
# plus the files the repo adds at their kernel paths, in their final state.
# Two files in patches/ say how the added files enter the series:
#
#   patches/introduce   "PATH PATCH": the patch that adds PATH (a file, or a
#                       directory ending in "/"); the longest match wins
#   patches/pieces/PATCH  the diff PATCH makes to added files that earlier
#                       patches introduced (a file split across patches)
#
# Walking the series backwards from the final files, reverse-applying each
# patch's piece gives every added file as it is at every patch; patch N of
# the output is then patches/N plus the added files' changes at N.  Each
# patch keeps its author, date and message, and gets a Signed-off-by line
# for user.name and user.email of git config as this repository sees it
# (the patches' own Signed-off-by is the only one when none is set).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
src=$build/linux
out=$build/series
introduce=$top/patches/introduce
pieces=$top/patches/pieces
cover=$top/patches/cover-letter

die() { echo "series: $*" >&2; exit 1; }
# As root: what this deletes and writes is root's alone (mk/safe-build.sh).
. "$top/mk/safe-build.sh"
safe_build series "$build" linux series
g() { git -C "$src" "$@"; }

patch_list() {
	sed -e 's/#.*//' -e 's/[[:space:]]*$//' "$top/patches/series" | grep -v '^$'
}

mapfile -t names < <(patch_list)
n=${#names[@]}
stamp=$(cat "$src/.devmem-series" 2>/dev/null) || die "build/linux is not prepared (make tree)"
tip=${stamp##* }
mapfile -t commits < <(g rev-list --reverse "base..$tip")
[ "${#commits[@]}" = "$n" ] || die "build/linux has ${#commits[@]} commits, patches/series $n (make tree)"
declare -A index
for i in "${!names[@]}"; do index[${names[$i]}]=$((i + 1)); done

for p in "$pieces"/*; do
	[ -e "$p" ] || continue
	[ -n "${index[$(basename "$p")]:-}" ] || die "patches/pieces/$(basename "$p") is no patch of patches/series"
done

# ---- the patch that introduces each added file ------------------------------
declare -A intro_of
mapfile -t added < "$src/.devmem-overlay"
rules=$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$introduce")
[ -n "$rules" ] || die "patches/introduce names no file"
while read -r path patch; do
	[ -n "${index[$patch]:-}" ] || die "patches/introduce: $patch is no patch of patches/series"
	matched=0
	for f in "${added[@]}"; do
		case $path in
		*/) [[ $f == "$path"* ]] || continue ;;
		*) [ "$f" = "$path" ] || continue ;;
		esac
		matched=1
		# the longest path of patches/introduce that names the file
		old=${intro_of[$f]:-}
		old=${old%% *}
		if [ -z "$old" ] || [ ${#path} -gt ${#old} ]; then
			intro_of[$f]="$path ${index[$patch]}"
		fi
	done
	[ $matched = 1 ] || die "patches/introduce: $path names no file the repo adds"
done <<< "$rules"
for f in "${added[@]}"; do
	[ -n "${intro_of[$f]:-}" ] || die "$f: no line of patches/introduce names the patch that adds it"
done

# ---- every patch's tree: its commit in build/linux plus the added files ----
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
state=$tmp/state
mkdir -p "$state"
(cd "$top" && cp --parents -- "${added[@]}" "$state"/)
export GIT_INDEX_FILE=$tmp/index
declare -a trees
for ((j = n; j >= 1; j--)); do
	name=${names[$((j - 1))]}
	g read-tree "${commits[$((j - 1))]}"
	for f in "${added[@]}"; do
		[ "${intro_of[$f]##* }" -le "$j" ] || continue
		[ -f "$state/$f" ] || die "$f vanished before patch $j"
		mode=100644
		[ -x "$state/$f" ] && mode=100755
		blob=$(g hash-object -w --no-filters -- "$state/$f")
		g update-index --add --cacheinfo "$mode,$blob,$f"
	done
	trees[j]=$(g write-tree)
	if [ -f "$pieces/$name" ]; then
		touched=$(sed -n 's|^+++ b/||p' "$pieces/$name")
		[ -n "$touched" ] || die "patches/pieces/$name changes no file"
		while read -r f; do
			[ -n "${intro_of[$f]:-}" ] || die "patches/pieces/$name changes $f, which the repo does not add"
			[ "${intro_of[$f]##* }" -lt "$j" ] ||
				die "patches/pieces/$name changes $f, which only patch ${intro_of[$f]##* } adds"
		done <<< "$touched"
		# GNU patch, not git apply: inside some git work tree (a TMPDIR
		# there) git apply would skip paths outside it and succeed
		patch -s -R -p1 -F0 -N --no-backup-if-mismatch -r - -d "$state" \
			< "$pieces/$name" > "$tmp/patch.out" 2>&1 || {
			cat "$tmp/patch.out" >&2
			die "patches/pieces/$name no longer fits the files it changes (patch $j, $name): update it"
		}
	fi
	for f in "${added[@]}"; do
		[ "${intro_of[$f]##* }" = "$j" ] && rm -f "$state/$f"
	done
done
unset GIT_INDEX_FILE

# ---- the commits and the mails ------------------------------------------------
signer_name=$(git -C "$top" config user.name || true)
signer_email=$(git -C "$top" config user.email || true)
signoff=
[ -n "$signer_name" ] && [ -n "$signer_email" ] && signoff="Signed-off-by: $signer_name <$signer_email>"

parent=$(g rev-parse base)
for ((j = 1; j <= n; j++)); do
	c=${commits[$((j - 1))]}
	g log -1 --format=%B "$c" | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}' > "$tmp/msg"
	grep -q '^Signed-off-by: ' "$tmp/msg" || [ -n "$signoff" ] ||
		die "patch $j (${names[$((j - 1))]}) has no Signed-off-by and git config names nobody"
	if [ -n "$signoff" ] && ! grep -qxF "$signoff" "$tmp/msg"; then
		echo "$signoff" >> "$tmp/msg"
	fi
	parent=$(GIT_AUTHOR_NAME=$(g log -1 --format=%an "$c") \
		GIT_AUTHOR_EMAIL=$(g log -1 --format=%ae "$c") \
		GIT_AUTHOR_DATE=$(g log -1 --format=%ad --date=raw "$c") \
		GIT_COMMITTER_DATE=$(g log -1 --format=%ad --date=raw "$c") \
		g commit-tree "${trees[$j]}" -p "$parent" -F "$tmp/msg")
done
g update-ref refs/heads/devmem-series "$parent"

rm -rf "$out"
mkdir -p "$out"
# the same mails whatever the caller's git config says about them
g -c diff.noprefix=false -c diff.mnemonicPrefix=false -c format.signOff=false \
	-c format.coverFromDescription=message -c format.headers= \
	format-patch -q --cover-letter --subject-prefix="PATCH 6.1" \
	--suffix=.patch --no-signature --no-thread -o "$out" base..devmem-series
"$top"/mk/series-cover.py "$cover" "$out"/0000-cover-letter.patch "$top" "$build"
echo "series: $n patches and a cover letter in $out (branch devmem-series of build/linux)"
