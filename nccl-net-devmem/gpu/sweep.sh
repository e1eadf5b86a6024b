#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The plugin's threads and sockets against NCCL's tuned socket transport on
# the same GPU machine: all_reduce bus bandwidth, 1 MiB to 1 GiB, each
# variant ROUNDS times (default 2), alternating, and the median of each.
# Needs 2 GPUs, PyTorch with NCCL, gcc, make.
#
#   nccl-net-devmem/gpu/sweep.sh [ROUNDS [OUTFILE]]
#
# VARIANTS (env) replaces the list: "label:VAR=v,VAR=v label2:..." ("-"
# for no settings); a label starting with "sock" runs NCCL_NET=Socket.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
rounds=${1:-2}
out=${2:-/dev/stdout}
variants=${VARIANTS:-"plugin-4s2t:- plugin-4s4t:NCCL_DEVMEM_NTHREADS=4 \
plugin-8s4t:NCCL_DEVMEM_NSOCKS=8,NCCL_DEVMEM_NTHREADS=4 \
plugin-2s2t:NCCL_DEVMEM_NSOCKS=2,NCCL_DEVMEM_NTHREADS=2 \
sock-4x4:NCCL_SOCKET_NTHREADS=4,NCCL_NSOCKS_PERTHREAD=4"}
export NCCL_NVLS_ENABLE=0	# always: NVLink multicast off on shared hosts
export NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_IB_DISABLE=1 NCCL_NET_GDR_LEVEL=SYS
export PYTHONUNBUFFERED=1
tmp=$(mktemp -d)
make -s -C "$here" O="$tmp" all > /dev/null || { echo "sweep: the build failed"; exit 1; }
{
	nvidia-smi --query-gpu=name --format=csv,noheader | head -1
	for r in $(seq "$rounds"); do
		for v in $variants; do
			label=${v%%:*} sets=${v#*:} envs=()
			[ "$sets" = - ] || IFS=, read -r -a envs <<< "$sets"
			case $label in
			sock*) envs+=(NCCL_NET=Socket) ;;
			*) envs+=(NCCL_NET_PLUGIN="$tmp/libnccl-net-devmem.so" NCCL_NET=devmem) ;;
			esac
			env "${envs[@]}" timeout 110 torchrun --standalone --nproc_per_node=2 \
				"$here/gpu/collectives.py" bench "$label" 2>&1 | grep '^bench'
		done
	done
} | tee "$tmp/rounds"
awk '/^bench /{ k = $2; s = $3; all[k, s] = all[k, s] " " $8; lab[k] = 1; sz[s] = 1 }
	END {
		printf "%-14s", "median GB/s"
		n = split("1 4 16 64 256 1024", S, " ")
		for (i = 1; i <= n; i++) printf " %8s", S[i] " MiB"
		printf "\n"
		for (k in lab) {
			printf "%-14s", k
			for (i = 1; i <= n; i++) {
				m = split(all[k, S[i]], v, " ")
				for (a = 2; a <= m; a++)
					for (b = a; b > 1 && v[b - 1] + 0 > v[b] + 0; b--) {
						t = v[b]; v[b] = v[b - 1]; v[b - 1] = t
					}
				printf " %8s", m ? (m % 2 ? v[(m + 1) / 2] : sprintf("%.2f", (v[m / 2] + v[m / 2 + 1]) / 2)) : "-"
			}
			printf "\n"
		}
	}' "$tmp/rounds" | tee -a "$out"
rm -rf "$tmp"
