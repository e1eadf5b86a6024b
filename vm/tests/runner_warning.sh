#!/bin/bash
# A kernel WARNING provoked on purpose (lkdtm) fails the run, although the
# command itself succeeds.
top=$(cd "$(dirname "$0")/../.." && pwd)
log=${BUILD:-$top/build}/vm/runner-warning
VM_KMEMLEAK=0 FLAVOR=debug "$top"/vm/run -q -l "$log" -- \
	sh -c 'echo WARNING > /sys/kernel/debug/provoke-crash/DIRECT'
rc=$?
echo "vm/run with an lkdtm WARNING: exit $rc"
grep -q 'WARNING:' "$log"/console.log || { echo "no WARNING in the console log"; exit 1; }
[ $rc -eq 126 ]
