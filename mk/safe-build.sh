# shellcheck shell=bash
# Sourced by the scripts that delete, extract, format, lock or write in the
# build directory.  Run as root there, they must not be steered by anyone
# else: rm -r, tar -x, mkfs, a lock file or a redirection follows whatever
# symbolic link the owner of a directory on the way plants, and the guest of
# vm/run gets build/ and its log directory as read-write shares.
#
#   safe_build NAME DIR [SUB...]
#
# As root, exits 2 with "NAME: refusing to run as root: ..." unless
#   - DIR and every directory above it are root's and writable by no one
#     else (one above DIR may be writable by all with the sticky bit, as
#     /tmp is), and every symbolic link on the way to DIR is root's; a
#     missing DIR is made, one directory at a time (mkdir does not follow a
#     link), so that no one else can make it first;
#   - each SUB, a path relative to DIR that the script deletes, formats,
#     extracts into, locks or writes, is no symbolic link, and it and every
#     directory between DIR and it are root's and writable by no one else
#     (a missing SUB is fine: only root can make it);
#   - every entry right inside DIR, and inside each SUB that is a
#     directory, is root's (the script writes files there by name).
#
#   safe_path NAME PATH
#
# The walk of DIR alone, for PATH: it must not be made or looked into
# (the directory above what make clean removes, a kernel to boot).
#
# Not root: nothing is checked; the scripts can only harm what the user
# could harm anyway.

_safe_refuse() { # NAME WHAT
	echo "$1: refusing to run as root: $2: another user could point what $1 deletes, extracts or writes there at any file (make it root's alone, or run as that user)" >&2
	exit 2
}

_safe_who() { # UID
	local n
	n=$(getent passwd "$1" | cut -d: -f1) || true
	echo "${n:-uid $1}${n:+ (uid $1)}"
}

# _safe_dir_ok MODE GID LOOSE: no one but root may write in a directory of
# this octal mode and group; with LOOSE, the sticky bit makes it fine (no
# one may rename or delete what root made there).
_safe_dir_ok() {
	local m=$((8#$1))
	[ "$3" = 1 ] && (( m & 01000 )) && return 0
	(( m & 0002 )) && return 1
	(( m & 0020 )) && [ "$2" != 0 ] && return 1
	return 0
}

_safe_split() { # ARRAY PATH: the components of PATH
	local -n _safe_parts_of=$1
	IFS=/ read -r -d '' -a _safe_parts_of < <(printf '%s\0' "$2") || true
}

# _safe_walk NAME START REL FOLLOW MAKE: walks REL from the directory START
# (already trusted) one component at a time, as the kernel resolves it.
# FOLLOW: root's symbolic links are followed (else any link is refused).
# MAKE: a missing component is made.  Sets _safe_at to where the walk
# ended and _safe_found to 1 when all of REL exists.
_safe_walk() {
	local name=$1 cur=$2 follow=$4 make=$5 c next u g m t target hops=0 i=0
	local -a parts rest
	_safe_split parts "$3"
	_safe_found=1
	while [ "$i" -lt "${#parts[@]}" ]; do
		c=${parts[i]}
		i=$((i + 1))
		case $c in
		''|.) continue ;;
		..) cur=$(dirname -- "$cur"); continue ;;
		esac
		next=${cur%/}/$c
		if [ ! -e "$next" ] && [ ! -L "$next" ]; then
			if [ "$make" = 1 ]; then
				mkdir -m 0755 -- "$next" 2> /dev/null ||
					[ -e "$next" ] || [ -L "$next" ] ||
					_safe_refuse "$name" "cannot make $next"
			else
				# Whoever may write in cur could make it first.
				read -r u g m t < <(stat -c '%u %g %a %F' -- "$cur")
				_safe_dir_ok "$m" "$g" 0 ||
					_safe_refuse "$name" "$cur (mode $m) may be written by others than root, who could make $next there first"
				_safe_at=$next
				_safe_found=0
				return 0
			fi
		fi
		read -r u g m t < <(stat -c '%u %g %a %F' -- "$next") ||
			_safe_refuse "$name" "cannot stat $next"
		[ "$u" = 0 ] ||
			_safe_refuse "$name" "$next is owned by $(_safe_who "$u"), not root"
		case $t in
		'symbolic link')
			[ "$follow" = 1 ] ||
				_safe_refuse "$name" "$next is a symbolic link"
			hops=$((hops + 1))
			[ "$hops" -le 40 ] ||
				_safe_refuse "$name" "too many symbolic links at $next"
			target=$(readlink -- "$next")
			case $target in /*) cur=/ ;; esac
			rest=("${parts[@]:i}")
			_safe_split parts "$target"
			parts+=("${rest[@]}")
			i=0
			continue
			;;
		directory)
			_safe_dir_ok "$m" "$g" 1 ||
				_safe_refuse "$name" "$next (mode $m) may be written by others than root"
			;;
		*)
			_safe_dir_ok "$m" "$g" 0 ||
				_safe_refuse "$name" "$next (mode $m) may be written by others than root"
			for c in "${parts[@]:i}"; do
				case $c in ''|.) ;; *) _safe_refuse "$name" "$next is not a directory" ;; esac
			done
			;;
		esac
		cur=$next
	done
	_safe_at=$cur
	# The end of the walk: not even the sticky bit lets others in.
	if [ -d "$cur" ]; then
		read -r u g m t < <(stat -c '%u %g %a %F' -- "$cur")
		_safe_dir_ok "$m" "$g" 0 ||
			_safe_refuse "$name" "$cur (mode $m) may be written by others than root"
	fi
}

# _safe_entries NAME DIR: every entry right inside DIR is root's, and no
# file or directory there is writable by others.
_safe_entries() {
	local bad u m
	bad=$(find -P "$2" -mindepth 1 -maxdepth 1 \( ! -uid 0 -o \( ! -type l \
		\( -perm -0002 -o \( -perm -0020 ! -gid 0 \) \) \) \) -print -quit) ||
		_safe_refuse "$1" "cannot read $2"
	[ -n "$bad" ] || return 0
	read -r u m < <(stat -c '%u %a' -- "$bad")
	[ "$u" = 0 ] ||
		_safe_refuse "$1" "$bad is owned by $(_safe_who "$u"), not root"
	_safe_refuse "$1" "$bad (mode $m) may be written by others than root"
}

_safe_start() { # NAME PATH FOLLOW MAKE: _safe_walk from / (PATH from $PWD)
	local u g m t
	read -r u g m t < <(stat -c '%u %g %a %F' -- /)
	[ "$u" = 0 ] && _safe_dir_ok "$m" "$g" 1 ||
		_safe_refuse "$1" "/ is not root's alone"
	case $2 in
	/*) _safe_walk "$1" / "$2" "$3" "$4" ;;
	*) _safe_walk "$1" / "$PWD/$2" "$3" "$4" ;;
	esac
}

safe_build() {
	local name=$1 dir=$2 sub real
	shift 2
	[ "$(id -u)" = 0 ] || return 0
	_safe_start "$name" "$dir" 1 1
	real=$_safe_at
	[ -d "$real" ] || _safe_refuse "$name" "$dir is not a directory"
	_safe_entries "$name" "$real"
	for sub; do
		_safe_walk "$name" "$real" "$sub" 0 0
		if [ "$_safe_found" = 1 ] && [ -d "$_safe_at" ]; then
			_safe_entries "$name" "$_safe_at"
		fi
	done
}

safe_path() {
	[ "$(id -u)" = 0 ] || return 0
	_safe_start "$1" "$2" 1 0
}
