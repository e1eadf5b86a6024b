# devmem TCP for Linux 6.1: build, boot and test the series.
#
#   make demo       set up everything, boot the guest, run the demo
#   make check      build the debug kernel and selftests, run every test
#   make vm CMD=..  run one command in the guest (FLAVOR=debug|prod)
#   make refresh    write commits made in build/linux back to patches/
#   make check-nodevmem  build and boot with CONFIG_NET_DEVMEM off
#   make bench      measure what devmem saves (build/bench/results.md)
#   make check-kmsan  KMSAN kernel (clang): devmem_hostile and devmem_rx
#   make series     the series as mails for git am (build/series)
#   make series-check  git am it, build every patch, checkpatch, kernel-doc
#   make deb        Debian packages: kernel (Debian's config) and tools
#   make check-deb  boot a debootstrapped Debian 12 with them, run the demo
#   make nccl       the NCCL net plugin (build/nccl/libnccl-net-devmem.so)
#   make check-nccl the plugin's harness on this host (copy mode, loopback)
#   make check-nccl-gpu  the plugin under real NCCL on 2 GPUs (not in check)
#
# See README.md.

TOP      := $(CURDIR)
BUILD    := $(TOP)/build
SRC      := $(BUILD)/linux
FLAVOR   ?= debug
OBJ       = $(BUILD)/obj-$(FLAVOR)
JOBS     ?= $(shell nproc)
CMD      ?= uname -a

export BUILD FLAVOR

# Kbuild refuses a source or object directory whose path holds a space: a
# checkout in such a path builds elsewhere, e.g. make BUILD=/var/tmp/devmem.
ifneq ($(words $(BUILD)),1)
$(error build directory "$(BUILD)" has a space in its path; the kernel cannot be built there: run make BUILD=/a/path/without/spaces)
endif
export CCACHE_BASEDIR := $(TOP)
export CCACHE_DIR ?= $(HOME)/.cache/devmem-ccache
export PATH := /usr/lib/ccache:$(PATH)

CONFIGS_debug := x86_64_defconfig devmem.config devmem-debug.config
CONFIGS_prod  := x86_64_defconfig devmem.config
CONFIGS_nodevmem := x86_64_defconfig devmem.config devmem-off.config
CONFIGS_kmsan := x86_64_defconfig devmem.config devmem-kmsan.config
# Extra make variables of a flavor: KMSAN needs clang.
KMAKE_kmsan := LLVM=1
export KMAKE = $(KMAKE_$(FLAVOR))

.PHONY: all deps tree config kernel selftests vm demo check check-nodevmem check-kmsan deb check-deb bench refresh series series-check nccl check-nccl check-nccl-gpu clean help
.DEFAULT_GOAL := help

help:
	@sed -n '2,18p' Makefile | sed 's/^# \{0,1\}//'

# Installs the packages below as root when any is missing (apt-get).
deps:
	@"$(TOP)/mk/deps.sh"

# build/linux: the 6.1 base + patches/series + the files this repo adds.
tree: deps
	@"$(TOP)/mk/prepare-tree.sh"

config: tree
	@mkdir -p "$(OBJ)"
	@"$(TOP)/mk/config.sh" "$(SRC)" "$(OBJ)" $(CONFIGS_$(FLAVOR))

kernel: config
	@echo "kernel: building $(FLAVOR) kernel in $(OBJ)"
	@$(MAKE) -s -C "$(SRC)" O="$(OBJ)" $(KMAKE) -j$(JOBS) bzImage
	@echo "kernel: $$(cat "$(OBJ)/include/config/kernel.release") at $(OBJ)/arch/x86/boot/bzImage"

selftests: config
	@"$(TOP)/mk/selftests.sh" "$(SRC)" "$(BUILD)"

vm:
	@"$(TOP)/vm/run" -- sh -c '$(CMD)'

demo:
	@$(MAKE) -s FLAVOR=$(if $(filter command line,$(origin FLAVOR)),$(FLAVOR),prod) kernel selftests
	@"$(TOP)/mk/demo.sh" $(if $(filter command line,$(origin FLAVOR)),$(FLAVOR),prod)

check:
	@$(MAKE) -s FLAVOR=debug kernel selftests nccl
	@"$(TOP)/mk/check.sh"

# The series with CONFIG_NET_DEVMEM off: builds, boots, and bind-rx says so.
check-nodevmem:
	@$(MAKE) -s FLAVOR=nodevmem kernel
	@FLAVOR=nodevmem VM_KMEMLEAK=0 "$(TOP)/vm/run" -- "$(TOP)/vm/nodevmem-guest.sh"

# KMSAN (uninitialised memory reaching a copy, a branch or user space):
# the hostile-traffic and devmem receive tests on a clang-built KMSAN
# kernel. Not in make check: the build and the boot take too long for CI.
# The guest CPU is qemu64: with "max" this 6.1 KMSAN kernel faults at the
# end of RAM while patching alternatives. Jitterentropy's self test takes
# half a minute under KMSAN and TCG, hence the longer soft lockup limit;
# closing a 256 MiB udmabuf puts its 65536 pages in one loop (21 s here),
# hence the longer RCU stall limit (as CONFIG_RCU_CPU_STALL_TIMEOUT=60 in
# the debug kernel).
check-kmsan:
	@$(MAKE) -s FLAVOR=kmsan kernel selftests
	@FLAVOR=kmsan VM_KMEMLEAK=0 VM_MEM=$${VM_MEM:-8G} VM_TIMEOUT=$${VM_TIMEOUT:-12000} \
		VM_CPU=$${VM_CPU:-qemu64} VM_APPEND="watchdog_thresh=60 rcupdate.rcu_cpu_stall_timeout=60 $${VM_APPEND:-}" \
		"$(TOP)/vm/run" -l "$(BUILD)/vm/kmsan" -- "$(TOP)/vm/kmsan-guest.sh" "$(BUILD)" \
		$${DEVMEM_TIME_SCALE:-4} $${DEVMEM_BIG_DMABUF_MB:-256} "$${DEVMEM_RX_VARIANT-one_queue}"

# Debian packages (mk/deb.sh): linux-image, linux-headers and linux-libc-dev
# from Debian's 6.1 config plus devmem-host.config, built in build/obj-deb
# with the kernel's bindeb-pkg, and devmem-tools. A full distribution
# kernel: hours on two cores the first time, incremental after.
# DEB_CONFIG=guest packages the test guest's config instead (minutes).
deb: tree
	@"$(TOP)/mk/deb.sh"

# The packages of make deb on a debootstrapped Debian 12 booted in QEMU
# (mk/check-deb.sh; as root: debootstrap and chroot).
check-deb: deps
	@"$(TOP)/mk/check-deb.sh"

# Two boots of the production kernel, one under -icount and one counting
# instructions: RX bounce / plain / devmem, TX copy / zerocopy / devmem,
# token return, flows, bind sizes, the NCCL plugin against raw devmem RX
# (mk/bench.sh).
bench:
	@$(MAKE) -s FLAVOR=prod kernel selftests nccl
	@FLAVOR=prod "$(TOP)/mk/bench.sh"

refresh:
	@"$(TOP)/mk/refresh.sh"

# The series as mails (mk/series.sh): build/series/0000-cover-letter.patch
# and one patch per line of patches/series, every added file introduced by
# the patch of patches/introduce, pieces of files from patches/pieces/.
series: tree
	@"$(TOP)/mk/series.sh"

# git am of build/series onto the base, the same tree as build/linux, the
# kernel built at every patch, checkpatch --strict, kernel-doc
# (mk/series-check.sh; not in make check).
series-check: series
	@"$(TOP)/mk/series-check.sh"

# The NCCL net plugin over the devmem ABI (nccl-net-devmem/, issue 29): plain
# C, no CUDA or NCCL needed to build. check-nccl runs its harness, which
# drives the ncclNet API as NCCL does, over loopback on this host.
nccl:
	@$(MAKE) -s -C "$(TOP)/nccl-net-devmem" O="$(BUILD)/nccl" all

check-nccl:
	@$(MAKE) -s -C "$(TOP)/nccl-net-devmem" O="$(BUILD)/nccl" test

# Needs 2 GPUs, PyTorch with NCCL: collectives checked, and the benchmark
# against NCCL's socket transport (nccl-net-devmem/gpu-test.sh).
check-nccl-gpu:
	@"$(TOP)/nccl-net-devmem/gpu-test.sh" "$(BUILD)/nccl/gpu"

clean:
	@"$(TOP)/mk/clean.sh"
