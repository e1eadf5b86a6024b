#!/bin/bash
# make bench: measure devmem TCP against bounce buffers in the QEMU guest,
# then turn the raw results into build/bench/results.md (printed) and
# build/bench/rx.png (mk/bench-report.py, gnuplot).
#
# Two boots of the production kernel run the same interleaved rounds
# (vm/bench-guest.sh):
#
# 1. "icount": single-threaded TCG with -icount (VM_ICOUNT, default
#    "shift=0,sleep=off": one guest instruction is one nanosecond of guest
#    time, idle time is skipped), so guest time, throughput and the CPU time
#    the guest accounts depend on the instructions executed, not on the
#    host's load. Every section: RX and TX modes, token return, flows, bind,
#    the NCCL plugin against raw devmem RX.
# 2. "insn": multi-threaded TCG with the QEMU plugin vm/insn-count.c, which
#    counts the instructions each vCPU executes (receiver and sender apart).
#    RX and TX modes, flows and the NCCL plugin only; with BENCH_MEM=1 (the
#    default) it also counts the bytes each vCPU loads and stores (memory traffic per
#    payload byte). It cannot share the first boot: with
#    -icount's single TCG thread, QEMU 10.0 counts a block's instructions for
#    the vCPU that translated it, whichever vCPU runs it. BENCH_INSN=0
#    leaves this boot out.
#
# Both boots hide ERMS and FSRM from the guest (VM_CPU): with them the
# kernel and glibc copy with REP MOVSB, which -icount charges one
# instruction (1 ns) per byte and the plugin one per instruction, whatever
# its length; without them copies are loops of moves, counted alike.
#
# 3. "profile": multi-threaded TCG, the plugin's per-block profile of the
#    receiver's vCPU during one RX devmem run at MTU 1500, turned into the
#    top 15 kernel functions (mk/bench-profile.py, build/bench/profile.txt).
#    BENCH_PROFILE=0 leaves it out.
# 4. "profile-nccl" (when BENCH_SECTIONS has nccl): the same profile of the
#    receiver's vCPU during one run of the NCCL plugin with UNPACK
#    delivery, 256 MiB as well (build/bench/profile-nccl.txt), to set
#    against profile.txt. BENCH_PROFILE=0 leaves it out too.
#
# BENCH_ICOUNT=0 leaves boot 1 out (with BENCH_INSN=0: the profiles only,
# no results table).
#
# Knobs: BENCH_SECTIONS (all: "modes tokens flows bind nccl"; the insn
# boot runs those of them among "modes flows nccl"), BENCH_REPS (5),
# BENCH_MIB (256), BENCH_FLOW_REPS (3),
# BENCH_BIND_SIZES ("16M 64M 256M 1G"), BENCH_MTUS ("1500 4148 9000": the
# RX modes at each), BENCH_INSN (1), BENCH_MEM (1), VM_ICOUNT, VM_CPU,
# VM_MEM (6G), VM_TIMEOUT (3000 per boot).
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
flavor=${FLAVOR:-prod}
out=$build/bench
raw=$out/raw
icount=${VM_ICOUNT:-shift=0,sleep=off}
cpu=${VM_CPU:-max,la57=off,-erms,-fsrm}
reps=${BENCH_REPS:-5}
mib=${BENCH_MIB:-256}
flow_reps=${BENCH_FLOW_REPS:-3}
bind_sizes=${BENCH_BIND_SIZES:-16M 64M 256M 1G}
mtus=${BENCH_MTUS:-1500 4148 9000}
mem=${BENCH_MEM:-1}
sections=${BENCH_SECTIONS:-modes tokens flows bind nccl}
isections=
for s in $sections; do
	case " modes flows nccl " in *" $s "*) isections="$isections $s" ;; esac
done
tests=$build/selftests/net/devmem
# As root: what this deletes and writes is root's alone (mk/safe-build.sh).
. "$top/mk/safe-build.sh"
safe_build bench "$build" bench bench/raw

# A run of the profiles alone keeps the last measuring run's results.
if [ "${BENCH_ICOUNT:-1}" != 0 ] || [ "${BENCH_INSN:-1}" != 0 ]; then
	rm -rf "$raw"
	rm -f "$out"/insn.log "$out"/results.md "$out"/rx.png "$out"/rx.dat "$out"/rx.gp
else
	rm -rf "$raw"/profile "$raw"/profile-nccl
fi
mkdir -p "$raw"/icount "$raw"/insn
rm -f "$out"/profile.* "$out"/profile-nccl.*

# boot NAME SECTIONS [VAR=VALUE...]: one guest run of vm/bench-guest.sh
boot()
{
	local name=$1 sections=$2 start rc

	shift 2
	start=$(date +%s)
	env "$@" FLAVOR="$flavor" VM_CPU="$cpu" VM_MEM="${VM_MEM:-6G}" \
		VM_APPEND="udmabuf.size_limit_mb=2048 ${VM_APPEND:-}" \
		VM_KMEMLEAK=0 VM_TIMEOUT="${VM_TIMEOUT:-3000}" \
		"$top"/vm/run -l "$build"/vm/bench-"$name" -- \
		"$top"/vm/bench-guest.sh "$tests" "$raw/$name" "$reps" "$mib" \
		"$flow_reps" "$bind_sizes" "$sections" "$mtus" "$build/nccl"
	rc=$?
	{
		echo "guest_run_host_seconds: $(( $(date +%s) - start ))"
		echo "vm_cpu: $cpu"
	} >> "$raw/$name"/env
	echo "bench: $name boot took $(( $(date +%s) - start )) s (host clock)"
	[ $rc -eq 0 ] || echo "bench: the $name boot failed (exit $rc)" >&2
	return $rc
}

start=$(date +%s)
if [ "${BENCH_ICOUNT:-1}" != 0 ]; then
	echo "bench: boot 1: the $flavor kernel under TCG with -icount $icount"
	boot icount "$sections" VM_ICOUNT="$icount" VM_PLUGIN= || exit 1
	echo "icount: $icount" >> "$raw"/icount/env
fi

gcc -O2 -Wall -shared -fPIC -fvisibility=hidden \
	-o "$out"/insn-count.so "$top"/vm/insn-count.c || exit 1
if [ "${BENCH_INSN:-1}" != 0 ] && [ -n "$isections" ]; then
	echo "bench: boot 2: multi-threaded TCG, counting instructions per vCPU"
	boot insn "$isections" VM_ICOUNT= \
		VM_PLUGIN="file=$out/insn-count.so,out=$out/insn.log,mem=$mem" || exit 1
fi
if [ "${BENCH_PROFILE:-1}" != 0 ]; then
	echo "bench: boot 3: multi-threaded TCG, profiling RX devmem's receiver"
	mkdir -p "$raw"/profile
	boot profile "profile" VM_ICOUNT= \
		VM_PLUGIN="file=$out/insn-count.so,out=$out/profile.log,profile=$out/profile.raw,pvcpu=1" || exit 1
	frags=$(sed -n 's/^frags: //p' "$raw"/profile/profile-devmem-1.rx)
	python3 "$top"/mk/bench-profile.py "$out"/profile.raw \
		"$build"/obj-"$flavor"/vmlinux 15 "${frags:-0}" > "$out"/profile.txt || exit 1
	case " $sections " in
	*" nccl "*)
		echo "bench: boot 4: multi-threaded TCG, profiling the NCCL plugin's receiver"
		mkdir -p "$raw"/profile-nccl
		boot profile-nccl "nccl-profile" VM_ICOUNT= \
			VM_PLUGIN="file=$out/insn-count.so,out=$out/profile-nccl.log,profile=$out/profile-nccl.raw,pvcpu=1" ||
			exit 1
		python3 "$top"/mk/bench-profile.py \
			--maps "$raw"/profile-nccl/profile-nccl-unpack.rx "$out"/profile-nccl.raw \
			"$build"/obj-"$flavor"/vmlinux 25 > "$out"/profile-nccl.txt || exit 1
		;;
	esac
fi
if [ "${BENCH_ICOUNT:-1}" = 0 ] && [ "${BENCH_INSN:-1}" = 0 ]; then
	echo "bench: no measuring boot, no results table; profiles in $out/profile*.txt"
	exit 0
fi
echo "bench: the boots took $(( $(date +%s) - start )) s" |
	tee "$raw"/total_time

python3 "$top"/mk/bench-report.py "$raw" "$out" || exit 1
if command -v gnuplot >/dev/null; then
	gnuplot "$out"/rx.gp || echo "bench: gnuplot failed, no $out/rx.png" >&2
else
	echo "bench: gnuplot missing (make deps), no $out/rx.png" >&2
fi
cat "$out"/results.md
echo "bench: results in $out/results.md, plot in $out/rx.png"
