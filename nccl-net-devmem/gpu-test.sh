#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The plugin on real GPUs with real NCCL: 2 processes of one host, one GPU
# each, with P2P and SHM off so that every byte between the GPUs goes
# through the network plugin.  Needs 2 GPUs, PyTorch with NCCL, gcc, make.
#
#   nccl-net-devmem/gpu-test.sh [OUTDIR]     (default: $OUT, else ./gpu-out)
#
# 1. builds the plugin (no CUDA or NCCL headers needed);
# 2. "check": all_reduce, all_gather, reduce_scatter, broadcast, all_to_all
#    and send/recv, fp32 and bf16, 8 B to 1 GiB, every element checked,
#    NCCL_NET=devmem; NCCL's log must show the plugin loaded and the
#    channels "via NET/devmem";
# 3. "bench": all_reduce bus bandwidth, 1 MiB to 1 GiB, through the plugin
#    and through NCCL's socket transport (defaults, and 4 threads x 4
#    sockets), in the same run.
# Prints a summary and exits non-zero when a check fails.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-${OUT:-$PWD/gpu-out}}
mkdir -p "$out"
log=$out/gpu-test.log
: > "$log"
say() { echo "$*" | tee -a "$log"; }

ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
if [ "${ngpu:-0}" -lt 2 ]; then
	say "gpu-test: needs 2 GPUs, found ${ngpu:-0}"
	exit 2
fi
nvidia-smi -L | tee -a "$log"
build=$(mktemp -d)
if ! make -s -C "$here" O="$build" all >> "$log" 2>&1; then
	say "gpu-test: the plugin did not build"; exit 1
fi
lib=$build/libnccl-net-devmem.so

# Always: NVLink multicast stays off on shared hosts.
export NCCL_NVLS_ENABLE=0
export NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_IB_DISABLE=1
export NCCL_NET_GDR_LEVEL=SYS
export PYTHONUNBUFFERED=1
export TORCH_NCCL_ASYNC_ERROR_HANDLING=1
fails=0

# $1 = label, $2 = log file, $3 = time limit (s), rest = env assignments and the collectives.py args
run() {
	local label=$1 nlog=$2 limit=$3; shift 3
	local envs=() args=()
	while [ $# -gt 0 ] && [[ $1 == *=* ]]; do envs+=("$1"); shift; done
	args=("$@")
	env "${envs[@]}" NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET,ENV \
		NCCL_DEBUG_FILE="$nlog.%p" timeout "$limit" \
		torchrun --standalone --nproc_per_node=2 \
		"$here/gpu/collectives.py" "${args[@]}" 2>&1 |
		grep -v "^W.*OMP_NUM_THREADS\|^\*\*\*\*" | tee -a "$log"
	local rc=${PIPESTATUS[0]}
	cat "$nlog".* > "$nlog" 2>/dev/null; rm -f "$nlog".*
	[ "$rc" = 0 ] || say "gpu-test: $label exited $rc"
	return "$rc"
}

plugin=(NCCL_NET_PLUGIN="$lib" NCCL_NET=devmem)
nl=$build/nccl-check.log
say "== check: collectives through the plugin (NCCL_NET=devmem)"
run check "$nl" 200 "${plugin[@]}" check || fails=$((fails + 1))
for want in "Loaded net plugin devmem" "Using network devmem" "via NET/devmem"; do
	if grep -q "$want" "$nl"; then
		say "ok: NCCL's log says \"$want\" ($(grep -c "$want" "$nl") lines)"
	else
		say "not ok: NCCL's log never says \"$want\""; fails=$((fails + 1))
	fi
done
grep -m4 "NET/devmem\|devmem" "$nl" | sed 's/^/  | /' | tee -a "$log"
# This machine's NIC cannot bind a queue: the plugin must find out and say
# why it serves it over host buffers.
if grep -q "no devmem RX, copy mode" "$nl"; then
	say "ok: devmem RX not possible here, served in copy mode:"
	grep -m1 "no devmem RX, copy mode" "$nl" | sed 's/.*NET\/devmem : /  | /' | tee -a "$log"
else
	say "not ok: the log does not say why there is no devmem RX"; fails=$((fails + 1))
fi
cp "$nl" "$out/nccl-check.log"

say "== bench: all_reduce bus bandwidth"
run bench-plugin "$build/b1.log" 110 "${plugin[@]}" bench devmem-plugin || fails=$((fails + 1))
run bench-socket "$build/b2.log" 110 NCCL_NET=Socket bench socket-default || fails=$((fails + 1))
run bench-socket-tuned "$build/b3.log" 110 NCCL_NET=Socket NCCL_SOCKET_NTHREADS=4 \
	NCCL_NSOCKS_PERTHREAD=4 bench socket-4x4 || fails=$((fails + 1))
grep -m3 "via NET" "$build/b2.log" | sed 's/^/  | /' | tee -a "$log"

say "== all_reduce busbw (GB/s), $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
awk '/^bench /{ bw[$2 " " $3] = $8; sz[$3] = 1; lab[$2] = 1 }
	END {
		printf "%-9s %14s %14s %14s %8s %8s\n", "size", "devmem-plugin",
			"socket-default", "socket-4x4", "vs-def", "vs-4x4"
		n = split("1 4 16 64 256 1024", s, " ")
		for (i = 1; i <= n; i++) {
			p = bw["devmem-plugin " s[i]]; d = bw["socket-default " s[i]]
			t = bw["socket-4x4 " s[i]]
			printf "%-9s %14s %14s %14s %8s %8s\n", s[i] " MiB", p, d, t,
				(d > 0 ? sprintf("%.2fx", p / d) : "-"),
				(t > 0 ? sprintf("%.2fx", p / t) : "-")
		}
	}' "$log" | tee "$out/bench.txt" | tee -a "$log"

rm -rf "$build"
say "gpu-test: $fails failure(s)"
[ "$fails" = 0 ]
