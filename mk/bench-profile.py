#!/usr/bin/env python3
# Turn a profile of vm/insn-count.c (profile=PATH: "ADDRESS INSNS" lines,
# one per translation block start) into instructions per kernel function.
#
# Usage: bench-profile.py PROFILE VMLINUX [TOP [PER_UNIT]]
#
# Blocks are attributed to the function whose symbol is at or below their
# address (nm -n of VMLINUX; the guest runs with nokaslr); user-space blocks
# are one line, "[user]". With PER_UNIT (e.g. the fragments received in the
# profiled windows) a column of instructions per unit is added.

import bisect
import subprocess
import sys


def main():
    prof, vmlinux = sys.argv[1], sys.argv[2]
    top = int(sys.argv[3]) if len(sys.argv) > 3 else 40
    unit = float(sys.argv[4]) if len(sys.argv) > 4 else 0
    addrs, names = [], []
    nm = subprocess.run(["nm", "-n", vmlinux], capture_output=True, text=True,
                        check=True).stdout
    for line in nm.splitlines():
        w = line.split()
        if len(w) == 3 and w[1] in "tTwW":
            addrs.append(int(w[0], 16))
            names.append(w[2])
    per = {}
    total = 0
    with open(prof) as f:
        for line in f:
            a, n = line.split()
            a, n = int(a, 16), int(n)
            total += n
            if a < 1 << 63:
                name = "[user]"
            else:
                i = bisect.bisect_right(addrs, a) - 1
                name = names[i] if i >= 0 else "[kernel ?]"
            per[name] = per.get(name, 0) + n
    print(f"{'instructions':>14} {'share':>7}" + (f" {'per unit':>10}" if unit else "") + "  function")
    for name, n in sorted(per.items(), key=lambda kv: -kv[1])[:top]:
        print(f"{n:>14,} {n * 100 / total:6.2f}%" + (f" {n / unit:10.1f}" if unit else "") + f"  {name}")
    print(f"{total:>14,} 100.00%" + (f" {total / unit:10.1f}" if unit else "") + "  total")


if __name__ == "__main__":
    main()
