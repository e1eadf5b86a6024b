#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A/B of two plugin builds on the same GPU machine, with NCCL's tuned
# socket transport as the reference: all_reduce bus bandwidth, 1 MiB to
# 1 GiB, each of the three twice, alternating (single runs swing by up to
# 2x on the shared hosts).  Needs 2 GPUs, PyTorch with NCCL, gcc, make.
#
#   nccl-net-devmem/gpu/ab.sh OLD_SRC [OUTFILE]
#
# OLD_SRC: an older nccl-net-devmem/ source folder, e.g. made with
#   git archive 2213bac nccl-net-devmem | tar -x -C ab-old
# (leave ab-old untracked, not ignored, so the device tool carries it).
# The "new" build is this script's own folder.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
old=${1:?usage: $0 OLD_SRC [OUTFILE]}
out=${2:-/dev/stdout}
export NCCL_NVLS_ENABLE=0	# always: NVLink multicast off on shared hosts
export NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_IB_DISABLE=1 NCCL_NET_GDR_LEVEL=SYS
export PYTHONUNBUFFERED=1
tmp=$(mktemp -d)
make -s -C "$here" O="$tmp/new" all > /dev/null && make -s -C "$old" O="$tmp/old" all > /dev/null ||
	{ echo "ab: a build failed"; exit 1; }
bench() {
	local label=$1
	shift
	env "$@" timeout 110 torchrun --standalone --nproc_per_node=2 \
		"$here/gpu/collectives.py" bench "$label" 2>&1 | grep '^bench'
}
{
	nvidia-smi --query-gpu=name --format=csv,noheader | head -1
	for r in 1 2; do
		bench "new-$r" NCCL_NET_PLUGIN="$tmp/new/libnccl-net-devmem.so" NCCL_NET=devmem
		bench "old-$r" NCCL_NET_PLUGIN="$tmp/old/libnccl-net-devmem.so" NCCL_NET=devmem
		bench "sock4x4-$r" NCCL_NET=Socket NCCL_SOCKET_NTHREADS=4 NCCL_NSOCKS_PERTHREAD=4
	done
} | tee "$out"
rm -rf "$tmp"
