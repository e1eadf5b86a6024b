#!/bin/bash
# Build and install the devmem selftests (kselftest layout, with the
# kernel's own run_kselftest.sh) into BUILD/selftests.
set -euo pipefail
src=$1 build=$2
targets=${SELFTEST_TARGETS:-net/devmem}
obj=$build/obj-${FLAVOR:-debug}
hdr=$build/selftests-headers
# As root: what this deletes and installs into is root's alone
# (mk/safe-build.sh).
. "$(dirname "$0")/safe-build.sh"
safe_build selftests "$build" selftests selftests-obj selftests-headers

# uAPI headers of this tree, for tests that use new ABI.
# shellcheck disable=SC2086 # KMAKE: the flavor's make variables (LLVM=1)
make -s -C "$src" O="$obj" ${KMAKE:-} INSTALL_HDR_PATH="$hdr" headers_install >/dev/null

rm -rf "$build"/selftests
make -s -C "$src"/tools/testing/selftests TARGETS="$targets" \
	O="$build"/selftests-obj INSTALL_PATH="$build"/selftests \
	KHDR_INCLUDES="-isystem $hdr/include" install >/dev/null
echo "selftests: $(grep -c . "$build"/selftests/kselftest-list.txt) test(s) in $build/selftests"
