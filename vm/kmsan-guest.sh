#!/bin/bash
# make check-kmsan, in the guest: devmem_hostile.sh and devmem_rx.sh on
# the KMSAN kernel, run directly rather than through run_kselftest.sh,
# whose per-program limit (the settings file's 3000 s) is shorter than
# devmem_rx takes here. Arguments: the build directory, then
# DEVMEM_TIME_SCALE (the tests stretch their fixed waits and devmem_rx its
# time limits by it; default 4) and DEVMEM_BIG_DMABUF_MB (what the 1 GiB
# test of devmem_rx holds instead; default 256), and which variant of
# devmem_rx runs (DEVMEM_RX_VARIANT: one_queue by default, "" for both:
# 19 tests of one_queue took about an hour on 2026-11-23). Each suite
# gets 5400 s, both fit the boot's 12000. The runner fails the boot on any
# KMSAN report (or other splat) in the kernel log.
set -o pipefail
dir=$1/selftests/net/devmem
export DEVMEM_TIME_SCALE=${2:-4}
export DEVMEM_BIG_DMABUF_MB=${3:-256}
# one variant of devmem_rx (one_queue, two_queues, or "" for both)
export DEVMEM_RX_VARIANT=${4-one_queue}
cd "$dir" || exit 1
echo "TAP version 13"
echo "1..2"
n=0 rc=0
for t in devmem_hostile.sh devmem_rx.sh; do
	n=$((n + 1))
	start=$(date +%s)
	if timeout 5400 ./"$t" 2>&1 | sed 's/^/# /'; then
		echo "ok $n $t # $(($(date +%s) - start)) s"
	else
		echo "not ok $n $t # $(($(date +%s) - start)) s"
		rc=1
	fi
done
exit $rc
