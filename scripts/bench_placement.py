#!/usr/bin/env python3
# scripts/bench_placement.py SIZE PTX [OFFSETS]: whether where A, B and C lie in memory moves a
# seed-2 kernel's time (tric's kernels ran about 575 or about 640 TFLOPS from one process to the
# next at 3072, docs/performance.md). Run ON the GPU machine: one tric PTX of examples/matmul.tri's
# kernel_matmul (fp16, M = N = K = SIZE, any config; scripts/bench_stream_k_ptx.sh makes them)
# and cuBLAS (torch.matmul) on A, B, C placed at each byte offset (comma-separated, default
# 0,256,4096,65536,1048576,2097152,3145728) into buffers of their own, every C checked against
# torch's first, timed by triton.testing.do_bench (median, L2 flushed) in two rounds whose order
# is reversed. Prints TFLOPS per offset, tric's and cuBLAS's.
import ctypes
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402
import triton  # noqa: E402
from tric_ptx import TricPtx  # noqa: E402


def placed(n, offset, seed):
    """An n x n fp16 tensor offset bytes into a buffer of its own (filled from seed when seed)."""
    store = torch.empty(n * n * 2 + offset, device="cuda", dtype=torch.uint8)
    t = store[offset:offset + n * n * 2].view(torch.float16).view(n, n)
    if seed is not None:
        g = torch.Generator(device="cuda").manual_seed(seed)
        t.copy_(torch.rand(n, n, device="cuda", generator=g, dtype=torch.float16) - 0.5)
    return t, store


def main(argv):
    if len(argv) < 3:
        sys.exit("usage: bench_placement.py SIZE PTX [OFFSETS]")
    n = int(argv[1])
    offsets = [int(x) for x in (argv[3] if len(argv) > 3 else
                                "0,256,4096,65536,1048576,2097152,3145728").split(",")]
    torch.cuda.init()
    torch.empty(1, device="cuda")
    k = TricPtx(ctypes.CDLL("libcuda.so.1"), argv[2])
    bm, bn = int(k.consts["BLOCK_SIZE_M"]), int(k.consts["BLOCK_SIZE_N"])
    grid = (triton.cdiv(n, bm) * triton.cdiv(n, bn),)
    runs = []
    for off in offsets:
        (a, sa), (b, sb) = placed(n, off, 1), placed(n, off, 2)
        c, sc = placed(n, off, None)
        c.fill_(float("nan"))
        ref = torch.matmul(a, b)
        run = k.launcher(grid, [a, b, c, n, n, n, n, 1, n, 1, n, 1])
        run()
        torch.cuda.synchronize()
        err = (c.float() - ref.float()).abs().max().item()
        if not err <= 1e-2 * n ** 0.5:
            sys.exit("offset %d: max error %g" % (off, err))
        runs.append((off, run, (lambda a=a, b=b: torch.matmul(a, b)), (sa, sb, sc)))
    flops = 2 * n ** 3
    times = {off: ([], []) for off, _, _, _ in runs}
    for rnd in range(2):
        for off, run, cub, _ in (runs if rnd == 0 else runs[::-1]):
            times[off][0].append(triton.testing.do_bench(run, return_mode="median"))
            times[off][1].append(triton.testing.do_bench(cub, return_mode="median"))
    print("# %s, %d^3, %s" % (os.path.basename(argv[2]), n, torch.cuda.get_device_name()))
    for off, (t, u) in times.items():
        print("offset %8d: tric %s TFLOPS, cuBLAS %s" % (
            off, " ".join("%.1f" % (flops / x * 1e-9) for x in t),
            " ".join("%.1f" % (flops / x * 1e-9) for x in u)), flush=True)


if __name__ == "__main__":
    main(sys.argv)
