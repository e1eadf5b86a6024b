#!/usr/bin/env python3
# Turn a profile of vm/insn-count.c (profile=PATH: "ADDRESS INSNS" lines,
# one per translation block start) into instructions per kernel function.
#
# Usage: bench-profile.py [--maps FILE] PROFILE VMLINUX [TOP [PER_UNIT]]
#
# Blocks are attributed to the function whose symbol is at or below their
# address (nm -n of VMLINUX; the guest runs with nokaslr). User-space blocks
# are one line, "[user]", unless --maps names a file with the profiled
# process's executable mappings as "map: " lines of /proc/PID/maps (what
# nccl_harness --bench prints; the guest sees the host's files under the
# same paths): then they are named "FILE:function" by nm of that file
# (its dynamic symbols where it has no others), or "FILE:?". That assumes
# position-independent files whose text lies at its file offset (gcc's
# default on Debian) and files unchanged since the profiled run. With PER_UNIT
# (e.g. the fragments received in the profiled windows) a column of
# instructions per unit is added.

import bisect
import subprocess
import sys


def symbols(path, dynamic=False, check=False):
    """Sorted (addresses, names) of the text symbols nm finds in path
    (none where nm cannot read it, unless check)."""
    cmd = ["nm", "-n", "--defined-only"] + (["-D"] if dynamic else []) + [path]
    out = subprocess.run(cmd, capture_output=True, text=True, check=check).stdout
    addrs, names = [], []
    for line in out.splitlines():
        w = line.split()
        if len(w) == 3 and w[1] in "tTwWiI":
            addrs.append(int(w[0], 16))
            names.append(w[2])
    return addrs, names


def read_maps(path):
    """[(start, end, file offset, file)] of the "map: " lines in path."""
    maps = []
    with open(path) as f:
        for line in f:
            if not line.startswith("map: "):
                continue
            w = line[5:].split()
            if len(w) < 6:
                continue
            lo, hi = (int(x, 16) for x in w[0].split("-"))
            maps.append((lo, hi, int(w[2], 16), w[5]))
    return maps


def main():
    args = sys.argv[1:]
    maps = []
    if args[:1] == ["--maps"]:
        if len(args) < 4:
            sys.exit("usage: bench-profile.py [--maps FILE] PROFILE VMLINUX [TOP [PER_UNIT]]")
        maps = read_maps(args[1])
        args = args[2:]
    prof, vmlinux = args[0], args[1]
    top = int(args[2]) if len(args) > 2 else 40
    unit = float(args[3]) if len(args) > 3 else 0
    addrs, names = symbols(vmlinux, check=True)
    files = {}
    for _, _, _, path in maps:
        if path not in files:
            syms = symbols(path)
            files[path] = syms if syms[0] else symbols(path, dynamic=True)
    per = {}
    total = 0
    with open(prof) as f:
        for line in f:
            a, n = line.split()
            a, n = int(a, 16), int(n)
            total += n
            if a < 1 << 63:
                name = "[user]"
                for lo, hi, off, path in maps:
                    if lo <= a < hi:
                        # text segments lie at their file offset
                        fa, fn = files[path]
                        i = bisect.bisect_right(fa, a - lo + off) - 1
                        base = path.rsplit("/", 1)[-1]
                        name = f"{base}:{fn[i] if i >= 0 else '?'}"
                        break
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
