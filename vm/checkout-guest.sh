#!/bin/sh
# Run in the guest by vm/tests/runner_clone.sh, from a clone of this
# repository: writes to OUTFILE what the guest sees of the clone.
#
#   checkout-guest.sh OUTFILE
here=$(cd "$(dirname "$0")/.." && pwd)
{
	echo "pwd=$(pwd)"
	echo "checkout=$here"
	[ -r "$here/README.md" ] && echo "readme=readable"
	if touch "$here/.guest-write" 2>/dev/null; then
		echo "mode=writable"
	else
		echo "mode=read-only"
	fi
} > "$1"
