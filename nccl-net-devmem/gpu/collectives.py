# SPDX-License-Identifier: GPL-2.0
"""Collectives through whatever NCCL net the environment selects, checked.

Run by gpu-test.sh under torchrun with 2 (or more) processes, one GPU each:

    torchrun --standalone --nproc_per_node=2 collectives.py check
    torchrun --standalone --nproc_per_node=2 collectives.py bench LABEL

"check" runs all_reduce, all_gather, reduce_scatter, broadcast, all_to_all
and send/recv in fp32 and bf16 at sizes from 8 B to 1 GiB and compares every
element with the value it must have (small integers, exact in bf16).
"bench" times all_reduce from 1 MiB to 1 GiB and prints bus bandwidth.
Rank 0 prints one line per case; the exit status is non-zero on any wrong
element.
"""
import os
import sys
import time

import torch
import torch.distributed as dist

SIZES_CHECK = [8, 1000, 4096 + 12, 1 << 20, (1 << 20) * 3 + 8, 64 << 20,
               1 << 30]
SIZES_BENCH = [1 << 20, 4 << 20, 16 << 20, 64 << 20, 256 << 20, 1 << 30]
# COLLECTIVES_SYNC=1: nothing is queued on the GPU behind a collective
# until it has ended (gpu-test.sh's GPU test mode: the plugin's own CUDA
# copies must not wait in a GPU queue behind work that waits for NCCL's
# kernel, which waits for them).
SYNC = os.environ.get("COLLECTIVES_SYNC") == "1"


def coll(fn, *args, **kw):
    if not SYNC:
        return fn(*args, **kw)
    work = fn(*args, async_op=True, **kw)
    torch.cuda.synchronize()
    work.wait()
    return None


def pattern(n, seed, dtype, dev):
    # values 0..15 plus the seed: exact in bf16 for sums of a few ranks
    return ((torch.arange(n, device=dev, dtype=torch.int64) * 7 + seed) % 16
            ).to(dtype)


def elems(nbytes, dtype, world):
    per = torch.tensor([], dtype=dtype).element_size()
    n = max(nbytes // per, 1)
    return (n + world - 1) // world * world


def check(name, got, want, rank, errors):
    bad = (got != want).sum().item()
    if bad:
        errors.append(f"{name}: {bad} wrong elements on rank {rank}")
    return bad == 0


def run_check(rank, world, dev):
    errors = []
    for dtype in (torch.float32, torch.bfloat16):
        dn = str(dtype).replace("torch.", "")
        for nbytes in SIZES_CHECK:
            n = elems(nbytes, dtype, world)
            case = f"{dn} {nbytes} B"
            t0 = time.time()

            x = pattern(n, rank, dtype, dev)
            coll(dist.all_reduce, x)
            want = sum(pattern(n, r, dtype, dev) for r in range(world))
            ok = check("all_reduce " + case, x, want, rank, errors)

            x = pattern(n // world, rank, dtype, dev)
            out = torch.empty(n, dtype=dtype, device=dev)
            coll(dist.all_gather_into_tensor, out, x)
            want = torch.cat([pattern(n // world, r, dtype, dev)
                              for r in range(world)])
            ok &= check("all_gather " + case, out, want, rank, errors)
            del out, want

            x = pattern(n, rank, dtype, dev)
            out = torch.empty(n // world, dtype=dtype, device=dev)
            coll(dist.reduce_scatter_tensor, out, x)
            full = sum(pattern(n, r, dtype, dev) for r in range(world))
            want = full[rank * (n // world):(rank + 1) * (n // world)]
            ok &= check("reduce_scatter " + case, out, want, rank, errors)
            del out, full, want

            x = pattern(n, rank + 3, dtype, dev)
            coll(dist.broadcast, x, src=world - 1)
            ok &= check("broadcast " + case, x,
                        pattern(n, world - 1 + 3, dtype, dev), rank, errors)

            x = pattern(n, rank, dtype, dev)
            out = torch.empty(n, dtype=dtype, device=dev)
            coll(dist.all_to_all_single, out, x)
            k = n // world
            want = torch.cat([pattern(n, r, dtype, dev)[rank * k:(rank + 1) * k]
                              for r in range(world)])
            ok &= check("all_to_all " + case, out, want, rank, errors)
            del out, want

            # send/recv around the ring, odd element counts
            m = max(n - 1, 1)
            x = pattern(m, rank + 5, dtype, dev)
            y = torch.empty(m, dtype=dtype, device=dev)
            ops = [dist.P2POp(dist.isend, x, (rank + 1) % world),
                   dist.P2POp(dist.irecv, y, (rank - 1) % world)]
            works = dist.batch_isend_irecv(ops)
            if SYNC:
                torch.cuda.synchronize()
            for w in works:
                w.wait()
            ok &= check("send/recv " + case, y,
                        pattern(m, (rank - 1) % world + 5, dtype, dev),
                        rank, errors)
            del x, y
            torch.cuda.synchronize()
            if rank == 0:
                print(f"{'ok' if ok else 'WRONG'}: 6 collectives, {case} "
                      f"({time.time() - t0:.2f} s)", flush=True)
            torch.cuda.empty_cache()
    flag = torch.tensor([len(errors)], device=dev)
    coll(dist.all_reduce, flag)
    for e in errors:
        print("error:", e, flush=True)
    if rank == 0:
        print(f"collectives: {'all correct' if flag.item() == 0 else 'ERRORS'}"
              f" on {world} ranks, NCCL {torch.cuda.nccl.version()}",
              flush=True)
    return flag.item() == 0


def run_bench(rank, world, dev, label):
    rows = []
    for nbytes in SIZES_BENCH:
        x = torch.ones(nbytes // 4, dtype=torch.float32, device=dev)
        iters = max(3, min(20, (256 << 20) // nbytes))
        for _ in range(2):
            dist.all_reduce(x)
        torch.cuda.synchronize()
        dist.barrier()
        t0 = time.time()
        for _ in range(iters):
            dist.all_reduce(x)
        torch.cuda.synchronize()
        dt = (time.time() - t0) / iters
        busbw = nbytes * 2 * (world - 1) / world / dt / 1e9
        rows.append((nbytes, dt, busbw))
        del x
    if rank == 0:
        for nbytes, dt, busbw in rows:
            print(f"bench {label} {nbytes >> 20} MiB {dt * 1e3:.2f} ms "
                  f"busbw {busbw:.2f} GB/s", flush=True)
    return True


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "check"
    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    local = int(os.environ.get("LOCAL_RANK", rank))
    torch.cuda.set_device(local)
    dev = torch.device("cuda", local)
    dist.init_process_group("nccl", device_id=dev)
    if mode == "bench":
        ok = run_bench(rank, world, dev, sys.argv[2] if len(sys.argv) > 2
                       else "?")
    else:
        ok = run_check(rank, world, dev)
    dist.destroy_process_group()
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
