#!/bin/bash
# Write OBJ/.config from the named config targets, only when one of the
# fragments (or the base defconfig) changed since the last time.
set -euo pipefail
# As root: the object directory is root's alone (mk/safe-build.sh).
. "$(dirname "$0")/safe-build.sh"
safe_build config "$2"
src=$(cd "$1" && pwd) obj=$(mkdir -p "$2" && cd "$2" && pwd)
shift 2
stamp=$obj/.devmem-config
want=$( {
	echo "$* ${KMAKE:-}"
	cat "$src"/arch/x86/configs/x86_64_defconfig
	for t in "$@"; do
		[ -f "$src/kernel/configs/$t" ] && cat "$src/kernel/configs/$t"
	done
	# Kconfig files changed by the series can change the result too.
	git -C "$src" rev-parse HEAD
} | sha1sum | cut -d' ' -f1)
if [ -f "$obj/.config" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
	exit 0
fi
echo "config: $* -> $obj/.config"
# One target per make: several config targets in one make do not merge
# reliably.
: > "$obj/.devmem-config.log"
for t in "$@"; do
	# shellcheck disable=SC2086 # KMAKE: extra make variables, e.g. LLVM=1
	make -s -C "$src" O="$obj" ${KMAKE:-} "$t" >> "$obj/.devmem-config.log" 2>&1 ||
		{ cat "$obj/.devmem-config.log" >&2; exit 1; }
done
# Every option a fragment sets (the last fragment to name it wins) must
# have survived the merge: a dependency that is off silently drops it.
declare -A wanted
for t in "$@"; do
	f=$src/kernel/configs/$t
	[ -f "$f" ] || continue
	while IFS= read -r line; do
		case $line in
		CONFIG_*=*) wanted[${line%%=*}]=$line ;;
		"# CONFIG_"*" is not set") opt=${line#\# }; wanted[${opt%% *}]=$line ;;
		esac
	done < "$f"
done
bad=0
for opt in "${!wanted[@]}"; do
	line=${wanted[$opt]}
	case $line in
	CONFIG_*) grep -qxF "$line" "$obj/.config" ;;
	*) ! grep -q "^$opt=" "$obj/.config" ;;
	esac || { echo "config: '$line' did not take (a dependency is off?)" >&2; bad=1; }
done
[ $bad = 0 ] || exit 1
echo "$want" > "$stamp"
