#!/bin/bash
# make check: run the selftests in the guest (debug kernel), then the tests
# of the guest runner itself on the host; print TAP and a closing
# "N passed, N failed[, N skipped]" line.  Exit non-zero on any failure.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
out=$build/check
# As root: build/ and the results are root's alone (mk/safe-build.sh).
. "$top/mk/safe-build.sh"
safe_build check "$build" check
mkdir -p "$out"
: > "$out/results.tap"

tap() { echo "$*" | tee -a "$out/results.tap"; }
n=0

# 1. The selftests and the guest tests of nccl-net-devmem (mk/guest-check.sh:
# one more program), in one boot of the debug kernel.
expected=$(($(grep -c . "$build"/selftests/kselftest-list.txt) + 1))
echo "check: running $expected test program(s) in the guest"
FLAVOR=debug VM_TIMEOUT=${VM_TIMEOUT:-3600} "$top"/vm/run -l "$build"/vm/check -- \
	"$top"/mk/guest-check.sh "$build" > "$out/guest.tap" 2> "$out/vm-run.err"
vmrc=$?
cat "$out/vm-run.err" >&2
cat "$out/guest.tap"
# A kselftest_harness program reports its own test cases as "# ok N ..."
# before its overall line: count the cases, and the program only when it
# failed although every case passed (crash, leak check, teardown).
awk '
	/^# (not )?ok [0-9]+ / { sub(/^# /, ""); sub(/ok [0-9]+ /, "ok "); cases[++n] = $0; if ($1 == "not") bad = 1; next }
	/^(not )?ok [0-9]+ / {
		top = $0; sub(/ok [0-9]+ /, "ok ", top)
		if (n == 0 || ($1 == "not" && !bad)) print top
		for (i = 1; i <= n; i++) print cases[i]
		n = 0; bad = 0; programs++
	}
	END { print programs > "/dev/stderr" }
' "$out/guest.tap" > "$out/guest.results" 2> "$out/guest.programs"
got=$(cat "$out/guest.programs")
while read -r line; do
	n=$((n + 1))
	echo "${line/ok/ok $n}" >> "$out/results.tap"
done < "$out/guest.results"
if [ "$got" -lt "$expected" ]; then
	n=$((n + 1))
	tap "not ok $n guest: $((expected - got)) selftest(s) did not report (guest died?)"
fi
n=$((n + 1))
case $vmrc in
124|125|126) tap "not ok $n guest: kernel log clean and guest finished (vm/run exit $vmrc)" ;;
*) tap "ok $n guest: kernel log clean and guest finished" ;;
esac

# 2. The NCCL plugin's harness on this host, over loopback (the guest ran
# its cases over the wire in nccl-net-devmem/tests/wire.sh).
n=$((n + 1))
if "$build"/nccl/nccl_harness "$build"/nccl/libnccl-net-devmem.so > "$out/host-nccl.log" 2>&1; then
	tap "ok $n host: nccl plugin harness ($(tail -1 "$out/host-nccl.log"))"
else
	sed 's/^/# /' "$out/host-nccl.log"
	tap "not ok $n host: nccl plugin harness"
fi
# and again with no progress threads: test() moves the bytes (the cases
# that set NCCL_DEVMEM_NTHREADS themselves keep theirs)
n=$((n + 1))
if HARNESS_NTHREADS=0 "$build"/nccl/nccl_harness "$build"/nccl/libnccl-net-devmem.so \
	> "$out/host-nccl-nothreads.log" 2>&1; then
	tap "ok $n host: nccl plugin harness, NCCL_DEVMEM_NTHREADS=0 ($(tail -1 "$out/host-nccl-nothreads.log"))"
else
	sed 's/^/# /' "$out/host-nccl-nothreads.log"
	tap "not ok $n host: nccl plugin harness, NCCL_DEVMEM_NTHREADS=0"
fi

# 3. The runner itself: it must be able to fail.
for t in "$top"/vm/tests/*.sh; do
	name=$(basename "$t" .sh)
	n=$((n + 1))
	if "$t" > "$out/host-$name.log" 2>&1; then
		tap "ok $n host: $name"
	else
		sed 's/^/# /' "$out/host-$name.log"
		tap "not ok $n host: $name"
	fi
done

pass=$(grep -c '^ok ' "$out/results.tap" | tr -d ' ')
skip=$(grep -c '^ok .*# SKIP' "$out/results.tap" | tr -d ' ')
fail=$(grep -c '^not ok ' "$out/results.tap" | tr -d ' ')
pass=$((pass - skip))
summary="$pass passed, $fail failed"
[ "$skip" -gt 0 ] && summary+=", $skip skipped"
# A CI log keeps only its tail: repeat why the guest failed just above
# the summary, where it is read.
if [ "$vmrc" -ge 124 ] && [ "$vmrc" -le 126 ]; then
	echo "# the guest's failure again (vm/run exit $vmrc):"
	sed 's/^/# /' "$out/vm-run.err"
fi
echo "$summary"
[ "$fail" -eq 0 ]
