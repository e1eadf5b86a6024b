#!/bin/bash
# make demo: boot the guest and run the demo in it (vm/demo-guest.sh).
# The client sends with devmem TX; DEMO_TX=plain makes it send from host
# memory with send() instead, as before devmem TX.  DEMO_MB: MiB to stream.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
flavor=${1:-prod}
build=${BUILD:-$top/build}
tx=${DEMO_TX:-devmem}
echo "demo: booting the $flavor kernel in QEMU (TCG), two igb NICs wired back to back"
# the guest does not inherit our environment: DEMO_TX goes as an argument
FLAVOR=$flavor "$top"/vm/run -l "$build"/vm/demo -- \
	"$top"/vm/demo-guest.sh "$build"/selftests/net/devmem "${DEMO_MB:-256}" "$tx"
