#!/usr/bin/env python3
# scripts/triton_seed2_sustained.py SIZE N [BMxBNxBK,WARPS,STAGES | cublas]: seed 2's
# kernel_matmul in Triton (or, with `cublas`, torch.matmul: cuBLAS) launched N times back to back on
# [0, 1) data (the seed's torch.rand), no L2 flush and no rest: the sustained regime, where the
# H100 sits at its power limit and lowers its clock, unlike do_bench's short bursts after a rest.
# Prints the mean time and TFLOPS over the N launches (between two CUDA events). scripts/seed2_sustained.sh runs it beside bench_matmul --reps=N and
# samples the SM clock and power meanwhile. Runs on the GPU machine (torch + Triton).
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402
from triton_seed2_report import seed2_launcher  # noqa: E402


def main(argv):
    size, n = int(argv[1]), int(argv[2])
    cfg = argv[3] if len(argv) > 3 else "128x256x64,8,3"
    a, b = (torch.rand(size, size, device="cuda", dtype=torch.float16) for _ in range(2))
    c = torch.empty(size, size, device="cuda", dtype=torch.float16)
    side = "cublas" if cfg == "cublas" else "triton"
    if side == "cublas":
        def run():
            torch.matmul(a, b, out=c)
    else:
        tile, warps, stages = cfg.split(",")
        bm, bn, bk = (int(x) for x in tile.split("x"))
        run = seed2_launcher(a, b, c, size, bm, bn, bk, int(warps), int(stages))
    for _ in range(10):
        run()
    torch.cuda.synchronize()
    err = (c.float() - torch.matmul(a, b).float()).abs().max().item()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(n):
        run()
    end.record()
    torch.cuda.synchronize()
    ms = start.elapsed_time(end) / n
    print("%s %d %s mean %.4f ms %.1f TFLOPS over %d launches (max err %.3g)" % (
        side, size, cfg, ms, 2 * size ** 3 / ms * 1e-9, n, err))


if __name__ == "__main__":
    main(sys.argv)
