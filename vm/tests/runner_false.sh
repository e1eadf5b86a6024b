#!/bin/bash
# "make vm CMD=false" exits non-zero: the guest's exit status reaches the host.
top=$(cd "$(dirname "$0")/../.." && pwd)
VM_KMEMLEAK=0 make -s -C "$top" vm CMD=false FLAVOR=debug
rc=$?
echo "make vm CMD=false: exit $rc"
[ $rc -ne 0 ]
