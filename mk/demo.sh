#!/bin/bash
# make demo: boot the guest and run the demo in it (vm/demo-guest.sh).
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
flavor=${1:-prod}
build=${BUILD:-$top/build}
echo "demo: booting the $flavor kernel in QEMU (TCG), two igb NICs wired back to back"
FLAVOR=$flavor "$top"/vm/run -l "$build"/vm/demo -- \
	"$top"/vm/demo-guest.sh "$build"/selftests/net/devmem "${DEMO_MB:-256}"
