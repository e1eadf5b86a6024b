#!/bin/bash
# make check's command in the guest: the kernel selftests (kselftest's
# run_kselftest.sh), then the tests of the repo's own programs that need
# the guest's NICs, each reported as one more top-level TAP line numbered
# after the selftests:
#
#   nccl-net-devmem/tests/wire.sh   the NCCL plugin's harness over the wire
#
#   mk/guest-check.sh BUILD
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:?usage: $0 BUILD}

"$build"/selftests/run_kselftest.sh
n=$(grep -c . "$build"/selftests/kselftest-list.txt)

run()
{
	local name=$1 limit=$2 rc

	shift 2
	n=$((n + 1))
	echo "# selftests: $name"
	timeout "$limit" "$@" 2>&1 | sed 's/^/# /'
	rc=${PIPESTATUS[0]}
	case $rc in
	0) echo "ok $n $name" ;;
	4) echo "ok $n $name # SKIP" ;;
	124) echo "not ok $n $name # TIMEOUT $limit seconds" ;;
	*) echo "not ok $n $name # exit=$rc" ;;
	esac
}

run "nccl-net-devmem: wire.sh" 1800 "$top"/nccl-net-devmem/tests/wire.sh "$build"
