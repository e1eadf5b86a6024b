#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The plugin on real GPUs with real NCCL: 2 processes of one host, one GPU
# each, with P2P and SHM off so that every byte between the GPUs goes
# through the network plugin.  Needs 2 GPUs, PyTorch with NCCL, gcc, make.
#
#   nccl-net-devmem/gpu-test.sh [OUTDIR [SECTIONS]]
#
# OUTDIR defaults to $OUT, else ./gpu-out; SECTIONS to "harness check
# testmode bench" (a 10-minute device call fits two or three of them).
# The plugin is built first (no CUDA or NCCL headers needed), then:
#   harness   the plugin's host harness (on lo) with libcuda present;
#   check     all_reduce, all_gather, reduce_scatter, broadcast, all_to_all
#             and send/recv, fp32 and bf16, 8 B to 1 GiB, every element
#             checked, NCCL_NET=devmem; NCCL's log must show the plugin
#             loaded and the channels "via NET/devmem", and say why the
#             NIC is served over host buffers;
#   testmode  the same checks in the GPU test mode (NCCL_DEVMEM_TEST_GPU=1:
#             GPU buffers and GPU dma-bufs, fragments emulated in a GPU RX
#             region), once with copy delivery and once with UNPACK
#             (NCCL's own kernel gathers them);
#   bench     all_reduce bus bandwidth, 1 MiB to 1 GiB, through the plugin
#             and through NCCL's socket transport (defaults, and 4 threads
#             x 4 sockets), in the same run, BENCH_ROUNDS times (default 3)
#             alternating, and the median of each.
# Prints a summary and exits non-zero when a check fails.  gpu/sweep.sh
# compares the plugin's sockets and threads; gpu/ab.sh two plugin builds.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-${OUT:-$PWD/gpu-out}}
sections=" ${2:-harness check testmode bench} "
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
	# shortly before the time limit: where each thread of the ranks waits
	( sleep $((limit - 15)); for p in $(pgrep -f collectives.py); do
		for t in /proc/$p/task/*; do
			echo "stuck? pid $p $(cat "$t/comm") wchan $(cat "$t/wchan" 2>/dev/null)" \
				"$(head -3 "$t/stack" 2>/dev/null | awk '{ printf "%s ", $2 }')"
		done; done >> "$nlog.stuck" 2>/dev/null ) &
	local watch=$!
	env "${envs[@]}" NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET,ENV \
		NCCL_DEBUG_FILE="$nlog.%p" timeout "$limit" \
		torchrun --standalone --nproc_per_node=2 \
		"$here/gpu/collectives.py" "${args[@]}" 2>&1 |
		grep -v "^W.*OMP_NUM_THREADS\|^\*\*\*\*" | tee -a "$log"
	local rc=${PIPESTATUS[0]}
	kill "$watch" 2>/dev/null
	cat "$nlog".* > "$nlog" 2>/dev/null; rm -f "$nlog".*
	[ "$rc" = 0 ] || say "gpu-test: $label exited $rc"
	return "$rc"
}

# $1 = log, rest = strings NCCL's or the plugin's log must have
expect() {
	local nlog=$1 want
	shift
	for want in "$@"; do
		if grep -qF -- "$want" "$nlog"; then
			say "ok: the log says \"$want\" ($(grep -cF -- "$want" "$nlog") lines)"
		else
			say "not ok: the log never says \"$want\""; fails=$((fails + 1))
		fi
	done
}

plugin=(NCCL_NET_PLUGIN="$lib" NCCL_NET=devmem)

if [[ $sections == *" harness "* ]]; then
	say "== harness: the plugin's host cases on lo, libcuda present"
	if "$build/nccl_harness" "$lib" 2>&1 | tee -a "$log" | tail -1 | grep -q " 0 failed"; then
		say "ok: harness"
	else
		say "not ok: harness"; fails=$((fails + 1))
	fi
fi

if [[ $sections == *" check "* ]]; then
nl=$build/nccl-check.log
say "== check: collectives through the plugin (NCCL_NET=devmem)"
run check "$nl" 200 "${plugin[@]}" check || fails=$((fails + 1))
expect "$nl" "Loaded net plugin devmem" "Using network devmem" "via NET/devmem"
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
fi

if [[ $sections == *" testmode "* ]]; then
# The GPU half of devmem with NCCL's real kernels: GPU buffers and GPU
# dma-bufs handed to the plugin, bind-tx and bind-rx of them tried (the
# virtio NIC refuses both), sends staged through host memory, received
# bytes placed at scattered pages of a GPU RX region and delivered from
# there as devmem fragments would be.
# The emulation's CUDA copies (staged sends, bytes placed in the region)
# run while NCCL's kernel waits for them, so nothing may sit in a GPU queue
# ahead of them that waits for that kernel:
#   EAGER: no lazy module loading, which waits for the GPU to drain (the
#     plugin refuses the mode without);
#   COLLECTIVES_SYNC=1: the test queues nothing behind a collective until
#     it has ended;
#   CUDA_DEVICE_MAX_CONNECTIONS=32: fewer streams share a hardware queue.
# A stalled request is reported after STALL_WARN_S (20) seconds.
testmode=(NCCL_DEVMEM_TEST_GPU=1 CUDA_MODULE_LOADING=EAGER COLLECTIVES_SYNC=${TESTMODE_SYNC:-1}
	CUDA_DEVICE_MAX_CONNECTIONS=${TESTMODE_CONNECTIONS:-32}
	NCCL_DEVMEM_STALL_WARN_S=${STALL_WARN_S:-20})
unpack=(NCCL_DEVMEM_UNPACK=1 NCCL_PROTO=Simple NCCL_PAT_ENABLE=0 NCCL_LOCAL_REGISTER=0
	NCCL_GRAPH_REGISTER=0)
for mode in ${TESTMODE_MODES:-copy unpack}; do
	tl=$build/nccl-test-$mode.log
	say "== testmode ($mode delivery): collectives with GPU buffers through the plugin"
	if [ $mode = copy ]; then
		run test-$mode "$tl" "${TESTMODE_LIMIT:-200}" "${plugin[@]}" "${testmode[@]}" check || fails=$((fails + 1))
	else
		run test-$mode "$tl" "${TESTMODE_LIMIT:-200}" "${plugin[@]}" "${testmode[@]}" "${unpack[@]}" check ||
			fails=$((fails + 1))
		expect "$tl" "UNPACK delivery (netDeviceType UNPACK, version 0x7), queue and handle in pinned and device memory"
	fi
	expect "$tl" "GPU test mode: CUDA|DMABUF advertised" "via NET/devmem/0/GDRDMA" \
		"test-mode RX region" "fragments emulated in" "no devmem TX on"
	grep -m2 "test-mode RX region\|no devmem TX on" "$tl" | sed 's/^.*NET\/devmem : \|^.*WARN /  | /' |
		tee -a "$log"
	region=$(grep -o "[0-9]* bytes received into the dma-buf (test mode's GPU region)" "$tl" |
		 awk '{ s += $1 } END { print s + 0 }')
	if [ "$region" -gt 0 ]; then
		say "ok: $region bytes went through the GPU RX region's pages"
	else
		say "not ok: no byte went through the GPU RX region"; fails=$((fails + 1))
	fi
	cp "$tl" "$out/nccl-test-$mode.log"
done
fi

if [[ $sections == *" bench "* ]]; then
say "== bench: all_reduce bus bandwidth"
for round in $(seq "${BENCH_ROUNDS:-3}"); do
	run bench-plugin "$build/b1.log" 110 "${plugin[@]}" bench devmem-plugin ||
		fails=$((fails + 1))
	run bench-socket "$build/b2.log" 110 NCCL_NET=Socket bench socket-default ||
		fails=$((fails + 1))
	run bench-socket-tuned "$build/b3.log" 110 NCCL_NET=Socket NCCL_SOCKET_NTHREADS=4 \
		NCCL_NSOCKS_PERTHREAD=4 bench socket-4x4 || fails=$((fails + 1))
done
grep -m3 "via NET" "$build/b2.log" | sed 's/^/  | /' | tee -a "$log"

say "== all_reduce busbw (GB/s), median of ${BENCH_ROUNDS:-3} rounds, $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
awk 'function median(k,   n, i, j, t, v) {
		n = split(all[k], v, " ")
		for (i = 2; i <= n; i++)
			for (j = i; j > 1 && v[j - 1] + 0 > v[j] + 0; j--) {
				t = v[j]; v[j] = v[j - 1]; v[j - 1] = t
			}
		return n ? (n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2) : ""
	}
	/^bench /{ all[$2 " " $3] = all[$2 " " $3] " " $8 }
	END {
		for (k in all) bw[k] = median(k)
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
grep "^bench " "$log" > "$out/bench-rounds.txt"
fi

rm -rf "$build"
say "gpu-test: $fails failure(s)"
[ "$fails" = 0 ]
