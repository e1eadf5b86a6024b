#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The plugin without progress threads (NCCL_DEVMEM_NTHREADS=0: NCCL's proxy
# thread moves the bytes in test()) on 2 GPUs.  SECTIONS (default "check
# sweep"): check = gpu-test.sh's "check" section with no progress threads
# (every collective checked, "via NET/devmem"); sweep = all_reduce bus
# bandwidth, 1 MiB to 1 GiB, against the defaults (2 sockets x 2 threads),
# ROUNDS times alternating, medians (gpu/sweep.sh).
#
#   nccl-net-devmem/gpu/nothreads.sh [OUTDIR [ROUNDS [SECTIONS]]]
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-${OUT:-./gpu-out}}
rounds=${2:-3}
sections=${3:-check sweep}
export NCCL_NVLS_ENABLE=0	# always: NVLink multicast off on shared hosts
mkdir -p "$out"
rc=0
for s in $sections; do
	case $s in
	check) NCCL_DEVMEM_NTHREADS=0 "$here"/gpu-test.sh "$out/check-nothreads" check || rc=1 ;;
	sweep) VARIANTS="plugin-2s2t:- plugin-2s0t:NCCL_DEVMEM_NTHREADS=0" \
		"$here"/gpu/sweep.sh "$rounds" "$out/sweep-nothreads.txt" || rc=1 ;;
	*) echo "nothreads: unknown section $s"; rc=1 ;;
	esac
done
exit $rc
