#!/usr/bin/env python3
# make bench: turn the raw results of the two guest boots (mk/bench.sh,
# vm/bench-guest.sh) into results.md, rx.dat and rx.gp (the gnuplot script
# that draws rx.png).
#
# Usage: bench-report.py RAW_DIR OUT_DIR
#
# RAW_DIR/icount and RAW_DIR/insn hold one "key: value" file per run side
# (NAME.rx, NAME.tx, NAME.bind) and env; OUT_DIR/insn.log the instruction
# counts of vm/insn-count.c at the markers the runs of the insn boot
# printed (marker_begin / marker_end).

import os
import re
import statistics
import sys

GIB = 1 << 30
RX_MODES = ["bounce", "plain", "devmem"]
TX_MODES = ["copy", "zerocopy", "devmem"]
FLOWS = [1, 4, 16, 64]
TOKEN_BATCHES = [1, 16, 128, 1024]
MTUS = [1500, 4148, 9000]


def read_kv(path):
    kv = {}
    if not os.path.exists(path):
        return kv
    with open(path) as f:
        for line in f:
            key, sep, val = line.rstrip("\n").partition(": ")
            if sep:
                kv[key] = val
    return kv


def read_markers(path):
    """mark id -> (list of (user, kernel) instructions per vCPU, list of
    (user loads, user stores, kernel loads, kernel stores) bytes per vCPU
    or None), both as first seen."""
    marks = {}
    if not os.path.exists(path):
        return marks
    with open(path) as f:
        for line in f:
            w = line.split()
            if len(w) < 5 or w[2] != "vcpu":
                continue
            mid = int(w[1])
            nums = [int(x) for x in w[5:]]
            if w[0] == "mark" and w[4] == "insn" and mid not in marks:
                marks[mid] = (list(zip(nums[0::2], nums[1::2])), None)
            elif (w[0] == "mem" and w[4] == "bytes" and mid in marks
                  and marks[mid][1] is None):
                mem = [tuple(nums[i:i + 4]) for i in range(0, len(nums), 4)]
                marks[mid] = (marks[mid][0], mem)
    return marks


class Run:
    """One side of one transfer, with its per-GiB figures."""

    def __init__(self, kv, marks):
        self.kv = kv
        self.bytes = int(kv["bytes"])
        self.gib = self.bytes / GIB
        self.mbps = float(kv["throughput_mbps"])
        self.user_s = float(kv["cpu_user_s"])
        self.kernel_s = float(kv["cpu_kernel_s"])
        self.cpu_user = self.user_s * 1e3 / self.gib
        self.cpu_kernel = self.kernel_s * 1e3 / self.gib
        self.cpu = self.cpu_user + self.cpu_kernel
        self.copy = float(kv["copy_per_byte"])
        self.insn = self.insn_user = self.insn_kernel = None
        self.moved = self.moved_user = self.moved_kernel = None
        cpu = int(kv["cpu"])
        b = marks.get(int(kv.get("marker_begin", -1)))
        e = marks.get(int(kv.get("marker_end", -1)))
        if b and e and cpu < len(b[0]) and cpu < len(e[0]):
            self.insn_user = (e[0][cpu][0] - b[0][cpu][0]) / self.gib / 1e6
            self.insn_kernel = (e[0][cpu][1] - b[0][cpu][1]) / self.gib / 1e6
            self.insn = self.insn_user + self.insn_kernel
        if b and e and b[1] and e[1] and cpu < len(b[1]) and cpu < len(e[1]):
            d = [y - x for x, y in zip(b[1][cpu], e[1][cpu])]
            self.moved_user = (d[0] + d[1]) / self.bytes
            self.moved_kernel = (d[2] + d[3]) / self.bytes
            self.moved = self.moved_user + self.moved_kernel

    def get(self, key):
        return float(self.kv[key])

    def per_frag_insn(self):
        """Instructions per dma-buf fragment."""
        return self.insn * 1e6 * self.gib / self.get("frags")

    def per_frag_us(self):
        """Accounted CPU microseconds per dma-buf fragment."""
        return (self.user_s + self.kernel_s) * 1e6 / self.get("frags")


def load_runs(raw, marks, prefix, side):
    """{variant: [Run]} of the files PREFIX-VARIANT-REP.SIDE in RAW."""
    runs = {}
    pat = re.compile(r"^" + prefix + r"-(\w+)-(\d+)\." + side + "$")
    if not os.path.isdir(raw):
        return runs
    for name in sorted(os.listdir(raw)):
        m = pat.match(name)
        if not m:
            continue
        kv = read_kv(os.path.join(raw, name))
        if "bytes" not in kv:
            print(f"bench-report: {name} is incomplete, left out",
                  file=sys.stderr)
            continue
        runs.setdefault(m.group(1), []).append(Run(kv, marks))
    return runs


def med(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def fmt(v, digits=1):
    return "n/a" if v is None else f"{v:,.{digits}f}"


def rng(values, digits=1):
    """Median (min–max)."""
    values = [v for v in values if v is not None]
    if not values:
        return "n/a"
    if len(values) == 1:
        return fmt(values[0], digits)
    return (f"{fmt(med(values), digits)} "
            f"({fmt(min(values), digits)}–{fmt(max(values), digits)})")


def ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


def pct(r):
    return "n/a" if r is None else f"{r * 100:.1f}%"


def linfit(xs, ys):
    """(intercept, slope) of the least-squares line through the points."""
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    slope = sxy / sxx if sxx else 0
    return my - slope * mx, slope


class Report:
    def __init__(self, raw, out):
        self.raw, self.out = raw, out
        self.lines = []
        self.env = read_kv(os.path.join(raw, "icount", "env"))
        self.ienv = read_kv(os.path.join(raw, "insn", "env"))
        marks = read_markers(os.path.join(out, "insn.log"))
        ic, ins = os.path.join(raw, "icount"), os.path.join(raw, "insn")
        self.rx = load_runs(ic, {}, "rx", "rx")
        self.rx_tx = load_runs(ic, {}, "rx", "tx")
        self.tx = load_runs(ic, {}, "tx", "tx")
        self.flows = load_runs(ic, {}, "flows", "rx")
        self.flows_tx = load_runs(ic, {}, "flows", "tx")
        self.tokens = load_runs(ic, {}, "tokens", "rx")
        self.irx = load_runs(ins, marks, "rx", "rx")
        self.irx_tx = load_runs(ins, marks, "rx", "tx")
        self.itx = load_runs(ins, marks, "tx", "tx")
        self.iflows = load_runs(ins, marks, "flows", "rx")
        self.nccl = load_runs(ic, {}, "nccl", "rx")
        self.inccl = load_runs(ins, marks, "nccl", "rx")
        self.nm = {}
        # the MTU sweep: MTU 1500 is the RX table's runs
        self.mtu_rx = {1500: self.rx}
        self.mtu_irx = {1500: self.irx}
        for mtu in MTUS[1:]:
            self.mtu_rx[mtu] = load_runs(ic, {}, f"rxmtu{mtu}", "rx")
            self.mtu_irx[mtu] = load_runs(ins, marks, f"rxmtu{mtu}", "rx")
        self.have_insn = any(r.insn is not None
                             for runs in self.irx.values() for r in runs)
        self.have_mem = any(r.moved is not None
                            for runs in self.irx.values() for r in runs)
        self.mtu_m = {}
        self.m = {}
        self.tok = {}
        self.fl = {}

    def w(self, line=""):
        self.lines.append(line)

    def insn_of(self, runs, attr="insn"):
        return [getattr(r, attr) for r in runs if r.insn is not None]

    def moved_of(self, runs, attr="moved"):
        return [getattr(r, attr) for r in runs if r.moved is not None]

    def mode_head(self, insn_cols):
        """Header and separator of a per-mode table (RX or TX) up to its
        own columns: throughput, CPU, and insn_cols when counted."""
        hdr = ("| mode | throughput Mbit/s | CPU ms/GiB user | CPU ms/GiB kernel "
               "| CPU ms/GiB total |")
        sep = "|---|---:|---:|---:|---:|"
        if self.have_insn:
            hdr += "".join(f" {c} |" for c in insn_cols)
            sep += "---:|" * len(insn_cols)
        return hdr, sep

    def mode_row(self, mode, runs, iruns):
        """The cells of a per-mode table row that RX and TX share."""
        row = (f"| {mode} | {rng([r.mbps for r in runs])} | "
               f"{fmt(med([r.cpu_user for r in runs]))} | "
               f"{fmt(med([r.cpu_kernel for r in runs]))} | "
               f"{rng([r.cpu for r in runs])} |")
        if self.have_insn:
            row += (f" {fmt(med(self.insn_of(iruns, 'insn_user')))} | "
                    f"{fmt(med(self.insn_of(iruns, 'insn_kernel')))} | "
                    f"{rng(self.insn_of(iruns))} |")
        return row

    def header(self):
        env, w = self.env, self.w
        w("# make bench: devmem TCP against bounce buffers, measured")
        w("")
        w(f"Kernel {env.get('kernel', '?')} (production config), "
          f"{env.get('cpus', '?')} vCPUs, two emulated igb (82576) NICs wired "
          f"back to back, MTU {env.get('mtu', '?')}, {env.get('mib', '?')} MiB "
          f"per transfer, {env.get('reps', '?')} interleaved rounds "
          f"(RX bounce, plain, devmem, TX copy, zerocopy, devmem, again...); "
          f"figures are medians over the rounds, ranges in parentheses. "
          f"Two guest boots: {env.get('guest_run_host_seconds', '?')} s "
          f"(icount) + {self.ienv.get('guest_run_host_seconds', '?')} s "
          f"(insn) of host time.")
        w("")
        w("**How.** Two boots of the same kernel run the same interleaved "
          "rounds. *icount*: QEMU TCG with `-icount "
          f"{env.get('icount', '?')}`, where one thread runs both vCPUs in "
          "turns and the guest clock counts executed instructions (1 "
          "instruction = 1 ns, idle time skipped), so runs repeat whatever "
          "the host does: throughput, token return times, bind times and "
          "*CPU ms/GiB*, the guest's own tick accounting of the CPU a side "
          "is pinned to (/proc/stat: user+nice, and system+irq+softirq as "
          "kernel) come from it. Both are in guest time: a 1 GHz, "
          "one-instruction-per-cycle machine whose two CPUs share one "
          "instruction stream, not a line rate. The tick accounting "
          "charges a busy vCPU for the other vCPU's turns too: it "
          "overstates a side whose peer is busy at the same time. *insn*: "
          "multi-threaded TCG with the QEMU plugin vm/insn-count.c: "
          "*Minsn/GiB* is the exact count of instructions the receiver's "
          "(or sender's) vCPU executed per GiB, kernel = code at kernel "
          "addresses whatever the context (syscalls, softirq, interrupts). "
          "It needs its own boot: under -icount QEMU 10.0 charges a block's "
          "instructions to the vCPU that translated it. Both boots hide "
          "ERMS/FSRM from the guest so that copies are loops of moves "
          "(-icount would charge a REP MOVSB one instruction per byte, the "
          "plugin one in all).")
        w("")
        w("Receiver: pinned to CPU 1 with the server NIC's interrupts; the "
          "whole RSS table points at RX queue 1 (header split on, 4096 "
          "descriptors, no interrupt moderation), which devmem binds to a "
          "64 MiB udmabuf. Sender: send() from host memory, pinned to CPU 0 "
          "with the client NIC's interrupts, TCP_NODELAY. *Copied/byte*: "
          "bytes the CPU copied per payload byte (recv() = 1, bounce = "
          "recv() + memcpy() = 2, devmem = only payload that arrived in host "
          "memory); a copied byte is read once and written once, so the "
          "memory traffic the CPU causes is twice that. TCG has no caches "
          "and no memory bandwidth: a copy costs only its instructions "
          "here, so this setup shows what devmem saves in copies, not what "
          "they cost on hardware.")
        w("")

    def rx_table(self):
        w, have = self.w, self.have_insn
        if not self.rx:
            return
        w("## RX: receiver side (CPU 1)")
        w("")
        hdr, sep = self.mode_head(["Minsn/GiB user", "Minsn/GiB kernel",
                                   "Minsn/GiB total", "sender Minsn/GiB"])
        if self.have_mem:
            hdr += " bytes moved/byte user | kernel | total |"
            sep += "---:|---:|---:|"
        w(hdr + " copied/byte |")
        w(sep + "---:|")
        for mode in RX_MODES:
            runs, iruns = self.rx.get(mode, []), self.irx.get(mode, [])
            if not runs:
                continue
            d = {
                "mbps": med([r.mbps for r in runs]),
                "cpu_user": med([r.cpu_user for r in runs]),
                "cpu_kernel": med([r.cpu_kernel for r in runs]),
                "cpu": med([r.cpu for r in runs]),
                "copy": med([r.copy for r in runs]),
                "insn_user": med(self.insn_of(iruns, "insn_user")),
                "insn_kernel": med(self.insn_of(iruns, "insn_kernel")),
                "insn": med(self.insn_of(iruns)),
                "sender": med(self.insn_of(self.irx_tx.get(mode, []))),
                "moved_user": med(self.moved_of(iruns, "moved_user")),
                "moved_kernel": med(self.moved_of(iruns, "moved_kernel")),
                "moved": med(self.moved_of(iruns)),
            }
            self.m[mode] = d
            row = self.mode_row(mode, runs, iruns)
            if have:
                row += f" {fmt(d['sender'])} |"
            if self.have_mem:
                row += (f" {fmt(d['moved_user'], 3)} | "
                        f"{fmt(d['moved_kernel'], 3)} | "
                        f"{rng(self.moved_of(iruns), 3)} |")
            w(row + f" {fmt(d['copy'], 3)} |")
        for base in ("bounce", "plain"):
            if "devmem" not in self.m or base not in self.m:
                continue
            a, b = self.m["devmem"], self.m[base]
            keys = ["mbps", "cpu_user", "cpu_kernel", "cpu"]
            if have:
                keys += ["insn_user", "insn_kernel", "insn", "sender"]
            if self.have_mem:
                keys += ["moved_user", "moved_kernel", "moved"]
            cells = [pct(ratio(a[k], b[k])) for k in keys + ["copy"]]
            w(f"| devmem/{base} | " + " | ".join(cells) + " |")
        w("")
        if self.have_mem:
            w("*Bytes moved/byte*: bytes the receiver's vCPU loaded and "
              "stored (every memory access of its instructions, user and "
              "kernel, counted by the plugin's memory callbacks in the insn "
              "boot) per payload byte received: the host memory traffic the "
              "CPU causes, which a copy raises by two bytes (a load and a "
              "store) per byte copied.")
            w("")

    def token_table(self):
        w = self.w
        dm = self.rx.get("devmem", [])
        if not self.tokens and not dm:
            return
        w("## Token return (RX devmem, SO_DEVMEM_DONTNEED)")
        w("")
        w("| when | tokens per call | ns per token, all calls | "
          "ns per token, median call | calls |")
        w("|---|---:|---:|---:|---:|")
        for batch in TOKEN_BATCHES:
            runs = self.tokens.get(str(batch), [])
            if not runs:
                continue
            d = {
                "per_call": med([r.get("tokens_per_call") for r in runs]),
                "median": med([r.get("ns_per_token_median") for r in runs]),
                "mean": med([r.get("ns_per_token") for r in runs]),
            }
            if batch == 128:
                self.tok = d
            w(f"| after the stream, {batch}-token calls | "
              f"{fmt(d['per_call'], 1)} | "
              f"{rng([r.get('ns_per_token') for r in runs], 1)} | "
              f"{rng([r.get('ns_per_token_median') for r in runs], 1)} | "
              f"{fmt(med([r.get('dontneed_calls') for r in runs]), 0)} |")
        if dm:
            w(f"| during the stream, 128-token calls | "
              f"{fmt(med([r.get('tokens_per_call') for r in dm]), 1)} | "
              f"{rng([r.get('ns_per_token') for r in dm], 1)} | "
              f"{rng([r.get('ns_per_token_median') for r in dm], 1)} | "
              f"{fmt(med([r.get('dontneed_calls') for r in dm]), 0)} |")
        w("")
        w("Each call is timed with clock_gettime() around setsockopt() in "
          "the icount boot (guest ns = instructions). *After the stream*: "
          "all tokens of a 16 MiB stream held (devmem_bench -H) and given "
          "back once the transfer is over, with nothing else running: the "
          "cost of the calls alone. *During the stream*: the calls of the "
          "RX devmem runs above; the mean also holds the other vCPU's turns "
          "when the single TCG thread switched during a call, and NET_RX "
          "softirq work run when the call re-enables bottom halves.")
        w("")

    def tx_table(self):
        w = self.w
        if not self.tx:
            return
        w("## TX: sender side (CPU 0), receiver: recv() into host memory")
        w("")
        hdr, sep = self.mode_head(["Minsn/GiB user", "Minsn/GiB kernel",
                                   "Minsn/GiB total"])
        if self.have_mem:
            hdr += " sender bytes moved/byte |"
            sep += "---:|"
        w(hdr + " copied/byte | sends reported copied |")
        w(sep + "---:|---:|")
        for mode in TX_MODES:
            runs, iruns = self.tx.get(mode, []), self.itx.get(mode, [])
            if not runs:
                continue
            row = self.mode_row(mode, runs, iruns)
            if self.have_mem:
                row += f" {rng(self.moved_of(iruns), 3)} |"
            zc = med([r.get("zc_copied") for r in runs])
            w(row + f" {fmt(med([r.copy for r in runs]), 3)} | "
              f"{fmt(zc, 0) if mode != 'copy' else '-'} |")
        w("")

    def flow_table(self):
        w, have = self.w, self.have_insn
        if not self.flows:
            return
        w(f"## Flows: RX devmem, {self.env.get('mib', '?')} MiB in total over "
          f"N connections (medians of {self.env.get('flow_reps', '?')})")
        w("")
        hdr = ("| flows | throughput Mbit/s | CPU ms/GiB | CPU µs per fragment "
               "| vs 1 flow |")
        sep = "|---:|---:|---:|---:|---:|"
        if have:
            hdr += " instructions per fragment | vs 1 flow |"
            sep += "---:|---:|"
        w(hdr + " retransmitted segments |")
        w(sep + "---:|")
        us, ins = {}, {}
        for n in FLOWS:
            runs, iruns = self.flows.get(str(n), []), self.iflows.get(str(n), [])
            if not runs:
                continue
            us[n] = med([r.per_frag_us() for r in runs])
            row = (f"| {n} | {rng([r.mbps for r in runs])} | "
                   f"{fmt(med([r.cpu for r in runs]))} | {fmt(us[n], 2)} | "
                   f"{pct(ratio(us[n], us.get(1)))} |")
            if have:
                ins[n] = med([r.per_frag_insn() for r in iruns
                              if r.insn is not None])
                row += f" {fmt(ins[n], 0)} | {pct(ratio(ins[n], ins.get(1)))} |"
            retr = med([r.get("tcp_RetransSegs")
                        for r in self.flows_tx.get(str(n), [])])
            w(row + f" {fmt(retr, 0)} |")
        self.fl = {"us": us, "insn": ins}
        w("")
        w("Cost per fragment: everything CPU 1 did during the transfer "
          "(guest accounting in the icount boot, instructions in the insn "
          "boot) divided by the dma-buf fragments (tokens) received. The "
          "flows' receive buffers share 16 MiB (tcp_rmem, at most the "
          "default 6 MiB each) so that together they never have more in "
          "flight than the 4096-descriptor ring holds: the emulated NIC "
          "drops silently when it is full, and the single TCG thread lets "
          "the sender run a whole turn while the receiver waits. The "
          "dma-buf is 256 MiB here. Retransmissions are the sender's, in "
          "the icount boot (tail loss probes mostly: no segment is lost).")
        w("")

    def bind_table(self):
        w = self.w
        ic = os.path.join(self.raw, "icount")
        binds = [read_kv(os.path.join(ic, n)) for n in sorted(os.listdir(ic))
                 if n.endswith(".bind")] if os.path.isdir(ic) else []
        binds = [kv for kv in binds if "dmabuf_size" in kv]
        binds.sort(key=lambda kv: int(kv["dmabuf_size"]))
        if not binds:
            return
        w("## dma-buf size: bind-rx of a udmabuf to RX queue 1 (median of 3)")
        w("")
        w("| dma-buf | pages | bind ms | bind ns per page | unbind ms "
          "| kernel memory | per page |")
        w("|---:|---:|---:|---:|---:|---:|---:|")
        for kv in binds:
            w(f"| {int(kv['dmabuf_size']) >> 20} MiB | {int(kv['pages']):,} | "
              f"{int(kv['bind_ns']) / 1e6:,.2f} | "
              f"{float(kv['bind_ns_per_page']):,.1f} | "
              f"{int(kv['unbind_ns']) / 1e6:,.2f} | "
              f"{int(kv['kmem_bytes']) / 1024:,.0f} KiB | "
              f"{float(kv['kmem_bytes_per_page']):,.1f} B |")
        w("")
        if len(binds) >= 2:
            xs = [int(kv["pages"]) for kv in binds]
            t0, t1 = linfit(xs, [int(kv["bind_ns"]) for kv in binds])
            k0, k1 = linfit(xs, [int(kv["kmem_bytes"]) for kv in binds])
            w(f"Least-squares line through the sizes: bind-rx takes "
              f"{t0 / 1e6:,.2f} ms + {t1:,.1f} ns per page and holds "
              f"{k0 / 1024:,.0f} KiB + {k1:,.1f} bytes per page of kernel "
              f"memory.")
            w("")
        w("Times in guest ns (icount). Bind time includes the restart of the "
          "queue on the binding's memory (a new page pool, the ring "
          "refilled); kernel memory is the Slab + VmallocUsed difference of "
          "/proc/meminfo right after bind-rx returned (pages taken straight "
          "from the page allocator, such as the scatterlist's, are not in "
          "it; the queue's old host-memory page pool is freed meanwhile).")
        w("")

    def mtu_tables(self):
        """One RX table per MTU of the sweep (bounce, plain, devmem)."""
        w, have = self.w, self.have_insn
        if not any(self.mtu_rx[mtu] for mtu in MTUS[1:]):
            return
        w("## RX by MTU: receiver side (CPU 1)")
        w("")
        w("The same three receivers at MTU 1500 (the RX table above), 4148 "
          "(4096-byte payloads: one page per segment) and 9000 (8948-byte "
          "payloads over three buffers), both NICs' MTU changed between "
          "the groups of a round, every mode at every MTU in each round.")
        w("")
        for mtu in MTUS:
            rx, irx = self.mtu_rx[mtu], self.mtu_irx[mtu]
            if not rx:
                continue
            self.mtu_m[mtu] = {}
            w(f"### MTU {mtu}")
            w("")
            hdr = "| mode | throughput Mbit/s | vs plain | CPU ms/GiB |"
            sep = "|---|---:|---:|---:|"
            if have:
                hdr += " Minsn/GiB | vs plain |"
                sep += "---:|---:|"
            if self.have_mem:
                hdr += " bytes moved/byte | minus devmem's |"
                sep += "---:|---:|"
            w(hdr + " copied/byte |")
            w(sep + "---:|")
            mm = self.mtu_m[mtu]
            for mode in RX_MODES:
                runs, iruns = rx.get(mode, []), irx.get(mode, [])
                if runs:
                    mm[mode] = {"mbps": med([r.mbps for r in runs]),
                                "cpu": med([r.cpu for r in runs]),
                                "insn": med(self.insn_of(iruns)),
                                "moved": med(self.moved_of(iruns)),
                                "copy": med([r.copy for r in runs]),
                                "runs": runs, "iruns": iruns}
            plain, dm = mm.get("plain"), mm.get("devmem")
            for mode in RX_MODES:
                d = mm.get(mode)
                if not d:
                    continue
                row = (f"| {mode} | {rng([r.mbps for r in d['runs']])} | "
                       f"{pct(ratio(d['mbps'], plain and plain['mbps']))} | "
                       f"{fmt(d['cpu'])} |")
                if have:
                    row += (f" {rng(self.insn_of(d['iruns']))} | "
                            f"{pct(ratio(d['insn'], plain and plain['insn']))} |")
                if self.have_mem:
                    diff = (None if d["moved"] is None or not dm
                            or dm["moved"] is None
                            else d["moved"] - dm["moved"])
                    row += f" {fmt(d['moved'], 3)} | {fmt(diff, 3)} |"
                w(row + f" {fmt(d['copy'], 3)} |")
            w("")

    def target(self, what, value, limit, above, unit="%"):
        """One line of the targets list: met or missed, and by how much."""
        if value is None:
            w = f"- {what}: not measured."
        else:
            ok = value >= limit if above else value <= limit
            v = (f"{value * 100:.1f}%" if unit == "%" else
                 f"{value:,.{2 if unit == 'x' else 1}f}")
            lim = (f"{limit * 100:.0f}%" if unit == "%" else f"{limit:g}")
            off = abs(value - limit) * (100 if unit == "%" else 1)
            w = (f"- {what} {'>=' if above else '<='} {lim}: "
                 f"{'**met**' if ok else '**missed**'} ({v}"
                 f"{'' if ok else f', {off:,.1f}' + (' points' if unit == '%' else '') + (' short' if above else ' over')})")
        self.w(w)

    def targets(self):
        m, mm = self.m, self.mtu_m
        self.w("## Targets")
        self.w("")

        def rel(mtu, key):
            d = mm.get(mtu, {})
            if "devmem" not in d or "plain" not in d:
                return None
            return ratio(d["devmem"][key], d["plain"][key])

        if "devmem" in m and "plain" in m:
            mm.setdefault(1500, {})
            for mode in RX_MODES:
                if mode in m:
                    mm[1500].setdefault(mode, m[mode])
        for mtu, limit in ((1500, 0.95), (4148, 0.75), (9000, 0.70)):
            self.target(f"devmem RX receiver instructions per GiB vs plain, "
                        f"MTU {mtu}", rel(mtu, "insn"), limit, False)
        for mtu, limit in ((1500, 1.00), (4148, 1.20)):
            self.target(f"devmem RX throughput under -icount vs plain, "
                        f"MTU {mtu}", rel(mtu, "mbps"), limit, True)
        for base, limit in (("plain", 1.9), ("bounce", 3.8)):
            diff = None
            if base in m and "devmem" in m and m[base].get("moved") is not None \
                    and m["devmem"].get("moved") is not None:
                diff = m[base]["moved"] - m["devmem"]["moved"]
            self.target(f"receiver bytes moved per payload byte, {base} "
                        f"minus devmem (MTU 1500)", diff, limit, True, "x")
        self.target("token return, 128-token calls, instructions per token "
                    "(guest ns under -icount)",
                    self.tok.get("mean") if self.tok else None, 150, False,
                    "n")
        ins = self.fl.get("insn", {})
        grow = ratio(ins.get(64), ins.get(1))
        self.target("instructions per fragment, 64 flows vs 1, growth",
                    None if grow is None else grow - 1, 0.10, False)
        nm = self.nm
        self.target("NCCL plugin devmem RX (UNPACK delivery) throughput "
                    "under -icount vs raw devmem RX",
                    ratio(nm.get("unpack", {}).get("mbps"),
                          nm.get("raw", {}).get("mbps")), 0.90, True)
        self.target("NCCL plugin devmem RX (UNPACK delivery) receiver "
                    "instructions per GiB vs raw devmem RX",
                    ratio(nm.get("unpack", {}).get("insn"),
                          nm.get("raw", {}).get("insn")), 1.15, False)
        self.w("")

    def plot(self):
        out, m = self.out, self.m
        with open(os.path.join(out, "rx.dat"), "w") as f:
            f.write("# mode mbps cpu_user cpu_kernel insn_user insn_kernel\n")
            for mode in RX_MODES:
                if mode in m:
                    d = m[mode]
                    f.write(f"{mode} {d['mbps']:.2f} {d['cpu_user']:.2f} "
                            f"{d['cpu_kernel']:.2f} {d['insn_user'] or 0:.2f} "
                            f"{d['insn_kernel'] or 0:.2f}\n")
        panels = 3 if self.have_insn else 2
        dat = os.path.join(out, "rx.dat")
        mtus = [mtu for mtu in MTUS
                if all(k in self.mtu_m.get(mtu, {}) for k in RX_MODES)]
        rows = 2 if len(mtus) > 1 else 1
        mdat = os.path.join(out, "rx-mtu.dat")
        with open(mdat, "w") as f:
            f.write("# mtu insn(bounce plain devmem) mbps(bounce plain devmem)\n")
            for mtu in mtus:
                d = self.mtu_m[mtu]
                f.write(f"{mtu} " + " ".join(f"{d[k]['insn'] or 0:.2f}"
                                            for k in RX_MODES) + " " +
                        " ".join(f"{d[k]['mbps']:.2f}" for k in RX_MODES) +
                        "\n")
        gp = f"""set terminal pngcairo size {420 * panels},{460 * rows} font ",10"
set output "{os.path.join(out, 'rx.png')}"
set style data histograms
set style fill solid 0.8 border -1
set grid ytics
set yrange [0:*]
set key outside bottom center horizontal
set multiplot layout {rows},{panels} title "RX bounce / plain / devmem: receiver CPU per GiB and throughput (make bench)"
set style histogram rowstacked
set boxwidth 0.7
set title "receiver CPU (guest accounting, -icount)"
set ylabel "ms per GiB"
plot "{dat}" using 3:xtic(1) title "user" lc rgb "#4c72b0", \\
     "" using 4 title "kernel" lc rgb "#dd8452"
"""
        if self.have_insn:
            gp += f"""set title "receiver instructions (CPU 1, plugin)"
set ylabel "million instructions per GiB"
plot "{dat}" using 5:xtic(1) title "user" lc rgb "#4c72b0", \\
     "" using 6 title "kernel" lc rgb "#dd8452"
"""
        gp += f"""set style histogram clustered gap 1
set boxwidth 0.9 relative
set title "throughput (guest time, -icount)"
set ylabel "Mbit/s"
plot "{dat}" using 2:xtic(1) notitle lc rgb "#55a868"
"""
        if rows == 2:
            gp += f"""set style histogram clustered gap 1
set key outside bottom center horizontal
set title "receiver instructions by MTU (plugin)"
set ylabel "million instructions per GiB"
plot "{mdat}" using 2:xtic(1) title "bounce" lc rgb "#8172b3", \\
     "" using 3 title "plain" lc rgb "#937860", \\
     "" using 4 title "devmem" lc rgb "#55a868"
set title "throughput by MTU (guest time, -icount)"
set ylabel "Mbit/s"
plot "{mdat}" using 5:xtic(1) title "bounce" lc rgb "#8172b3", \\
     "" using 6 title "plain" lc rgb "#937860", \\
     "" using 7 title "devmem" lc rgb "#55a868"
"""
        gp += """unset multiplot
"""
        with open(os.path.join(out, "rx.gp"), "w") as f:
            f.write(gp)

    NCCL_ROWS = [("raw", "raw devmem RX (devmem_bench)"),
                 ("unpack", "plugin, UNPACK delivery"),
                 ("copy", "plugin, copy delivery")]

    def nccl_table(self):
        """The NCCL plugin's devmem RX against raw devmem RX."""
        w = self.w
        if not self.nccl:
            return
        have = any(r.insn is not None for runs in self.inccl.values()
                   for r in runs)
        w("## The NCCL plugin's devmem RX against raw devmem RX "
          "(receiver, CPU 1)")
        w("")
        w("Interleaved rounds at MTU 1500 on the RX table's link and NIC "
          "set-up. *raw*: devmem_bench rx devmem (recvmsg with "
          "MSG_SOCK_DEVMEM on one connection, tokens back in calls of 128, "
          "no copy: what ncdevmem does), its flow on queue 1 by RSS, its "
          "receive buffer autotuned. *plugin*: nccl-net-devmem's harness in "
          "bench mode (`nccl_harness --bench`) driving the plugin as NCCL "
          "does: 512 KiB messages, 8 receives in flight, irecvConsumed for "
          "each, the plugin's defaults (2 data sockets with autotuned "
          "receive buffers, the control socket, and on one CPU no "
          "progress thread on the receiving side: test() reads; the "
          "sending side keeps one), the receiving side pinned to CPU 1, "
          "the sending side to CPU 0; host "
          "traffic on queue 0, and the plugin binds queue 1 (its own 64 MiB "
          "udmabuf) and steers its data sockets there. A plugin run in "
          "which less than 90% of the bytes came through the dma-buf "
          "(or, with UNPACK, through metas) fails instead of being "
          "measured. *UNPACK delivery*: the plugin writes NCCL's UNPACK "
          "metas and gives the tokens back in irecvConsumed; the driver "
          "takes each receive's metas as NCCL's kernel would but does not "
          "gather (in production that copy is the GPU's). *Copy delivery*: "
          "the plugin copies every byte out of the mapped dma-buf into the "
          "receive buffer (one CPU copy per byte; for host buffers, or GPUs "
          "without UNPACK). Each driver tests its oldest request in "
          "flight, and the next once it is done, as NCCL's proxy tests a "
          "connection's steps in order; a pass that finds none done ends "
          "in a nap (timer slack 1 ns), where NCCL's proxy thread would "
          "spin on a core of its own: 20 us on the receiving side, whose "
          "driver's own thread (test() calls, which read the sockets, and "
          "naps) is counted in the figures and shown apart below; 200 us "
          "on the sending side, which only keeps 8 messages (4 MiB, about "
          "9 ms of this link) posted, and whose naps every 20 us cost 13% "
          "of the throughput under -icount, where both vCPUs share one "
          "clock (nccl-net-devmem/README.md).")
        w("")
        hdr = ("| receiver | throughput Mbit/s | vs raw | CPU ms/GiB total "
               "| vs raw |")
        sep = "|---|---:|---:|---:|---:|"
        if have:
            hdr += (" Minsn/GiB user | Minsn/GiB kernel | Minsn/GiB total "
                    "| vs raw |")
            sep += "---:|---:|---:|---:|"
        w(hdr + " copied/byte |")
        w(sep + "---:|")
        for key, label in self.NCCL_ROWS:
            runs, iruns = self.nccl.get(key, []), self.inccl.get(key, [])
            if not runs:
                continue
            self.nm[key] = {
                "mbps": med([r.mbps for r in runs]),
                "cpu": med([r.cpu for r in runs]),
                "insn": med(self.insn_of(iruns)),
            }
        raw = self.nm.get("raw", {})
        for key, label in self.NCCL_ROWS:
            runs, iruns = self.nccl.get(key, []), self.inccl.get(key, [])
            if not runs:
                continue
            d = self.nm[key]
            row = (f"| {label} | {rng([r.mbps for r in runs])} | "
                   f"{pct(ratio(d['mbps'], raw.get('mbps')))} | "
                   f"{rng([r.cpu for r in runs])} | "
                   f"{pct(ratio(d['cpu'], raw.get('cpu')))} |")
            if have:
                row += (f" {fmt(med(self.insn_of(iruns, 'insn_user')))} | "
                        f"{fmt(med(self.insn_of(iruns, 'insn_kernel')))} | "
                        f"{rng(self.insn_of(iruns))} | "
                        f"{pct(ratio(d['insn'], raw.get('insn')))} |")
            w(row + f" {fmt(med([r.copy for r in runs]), 3)} |")
        w("")
        for key, label in self.NCCL_ROWS[1:]:
            runs = [r for r in self.nccl.get(key, [])
                    if "driver_cpu_s" in r.kv]
            if runs:
                w(f"{label}: the driver's thread used "
                  f"{fmt(med([r.get('driver_cpu_s') * 1e3 / r.gib for r in runs]))}"
                  f" ms/GiB of CPU and napped "
                  f"{fmt(med([r.get('driver_naps') / r.gib for r in runs]), 0)}"
                  f" times per GiB (medians).")
        w("")
        dm = [int(r.get("plugin_dmabuf_bytes")) for key in ("unpack", "copy")
              for r in self.nccl.get(key, []) if "plugin_dmabuf_bytes" in r.kv]
        if dm:
            sent = next(r.bytes for k in ("unpack", "copy")
                        for r in self.nccl.get(k, []))
            w(f"Every plugin run: {min(dm):,} to {max(dm):,} of its "
              f"{sent:,} bytes came through the dma-buf (the plugin's own "
              f"count at close).")
            w("")

    def profile(self):
        path = os.path.join(self.out, "profile.txt")
        if not os.path.exists(path):
            return
        self.w("## devmem RX at MTU 1500: the receiver's top 15 functions")
        self.w("")
        self.w("A third boot (multi-threaded TCG, the plugin's profile mode: a "
               "callback per executed block) profiles the receiver's vCPU "
               "(CPU 1) during one RX devmem run; mk/bench-profile.py "
               "attributes each block to the kernel function at or below its "
               "address (vmlinux symbols). *Per unit*: instructions per "
               "dma-buf fragment received.")
        self.w("")
        self.w("```")
        with open(path) as f:
            self.lines.extend(line.rstrip("\n") for line in f)
        self.w("```")
        self.w("")

    def run(self):
        self.header()
        self.rx_table()
        self.token_table()
        self.tx_table()
        self.flow_table()
        self.bind_table()
        self.mtu_tables()
        self.nccl_table()
        self.profile()
        self.targets()
        with open(os.path.join(self.out, "results.md"), "w") as f:
            f.write("\n".join(self.lines))
        self.plot()


if __name__ == "__main__":
    Report(sys.argv[1], sys.argv[2]).run()
