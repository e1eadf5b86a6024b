#!/bin/bash
# make check-kmsan, in the guest: devmem_hostile.sh and devmem_rx.sh on
# the KMSAN kernel, run directly rather than through run_kselftest.sh,
# whose per-program limit (the settings file's 3000 s) is shorter than
# devmem_rx takes here. The tests stretch their fixed waits by
# DEVMEM_TIME_SCALE, and the 1 GiB test of devmem_rx holds
# DEVMEM_BIG_DMABUF_MB instead. The runner fails the boot on any KMSAN
# report (or other splat) in the kernel log.
set -o pipefail
dir=$1/selftests/net/devmem
export DEVMEM_TIME_SCALE=${DEVMEM_TIME_SCALE:-4}
export DEVMEM_BIG_DMABUF_MB=${DEVMEM_BIG_DMABUF_MB:-256}
cd "$dir" || exit 1
echo "TAP version 13"
echo "1..2"
n=0 rc=0
for t in devmem_hostile.sh devmem_rx.sh; do
	n=$((n + 1))
	start=$(date +%s)
	if ./"$t" 2>&1 | sed 's/^/# /'; then
		echo "ok $n $t # $(($(date +%s) - start)) s"
	else
		echo "not ok $n $t # $(($(date +%s) - start)) s"
		rc=1
	fi
done
exit $rc
