#!/bin/bash
# A hung guest is ended by the runner's hard timeout.
top=$(cd "$(dirname "$0")/../.." && pwd)
log=${BUILD:-$top/build}/vm/runner-timeout
start=$(date +%s)
VM_KMEMLEAK=0 FLAVOR=debug "$top"/vm/run -q -t 30 -l "$log" -- sleep 3600
rc=$?
echo "vm/run -t 30 -- sleep 3600: exit $rc after $(( $(date +%s) - start ))s"
[ $rc -eq 124 ]
