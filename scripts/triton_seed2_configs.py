#!/usr/bin/env python3
# scripts/triton_seed2_configs.py [SIZES] [--seed16] [--config=...]: Triton's time for EACH of seed 2's autotune
# configs (not only the autotuner's pick), to set beside `bench/bench_matmul SIZES --seed-configs
# --kernel=seed2 --all` when one config is slower in tric than in Triton. The configs: the 13 of
# scripts/triton_anchor.py's cfgs() (issue 8's "13 seed configs", bench_matmul's --seed-configs),
# or with --seed16 the 16 of the seed's own list (scripts/triton_seed2_report.py); --config=
# BMxBNxBK,WARPS,STAGES (repeatable) times only those; --b2b times back to back instead (3 warm-up
# launches, then 40 each between two CUDA events, no L2 flush, the median: bench_matmul's default);
# --inputs=signed fills A and B uniform in [-1, 1) as bench_matmul does (default: torch.rand's
# [0, 1), as the seed; randn: triton_anchor.py's). The data changes the time: the tensor cores
# draw more power on signed random inputs, and a matmul at the H100's power limit runs slower. The seed's kernel_matmul from
# scripts/triton_seed2_report.py, GROUP_SIZE_M 8, fp16 in and out, timed as that script times
# (do_bench median, L2 flushed, TRIC_BENCH_REST_MS of rest first), each result checked against
# torch.matmul. Prints one line per size and config: M, config, ms, TFLOPS.
# Runs on the GPU machine (torch + Triton); elsewhere `python3 -m py_compile` checks it.
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402
import triton  # noqa: E402
from triton_seed2_report import REST_S, bench, get_cuda_autotune_config, seed2_launcher  # noqa: E402

# triton_anchor.py's cfgs() (importing it would run its benchmarks): BLOCK_SIZE_M, BLOCK_SIZE_N,
# BLOCK_SIZE_K, num_stages, num_warps, in its order.
ANCHOR_CONFIGS = [(128, 256, 64, 3, 8), (64, 256, 32, 4, 4), (128, 128, 32, 4, 4),
                  (128, 64, 32, 4, 4), (64, 128, 32, 4, 4), (128, 32, 32, 4, 4),
                  (128, 256, 128, 3, 8), (256, 128, 128, 3, 8), (256, 64, 128, 4, 4),
                  (64, 256, 128, 4, 4), (128, 128, 128, 4, 4), (128, 128, 64, 4, 4),
                  (128, 256, 64, 4, 8)]


def configs(seed16):
    if seed16:
        return get_cuda_autotune_config()
    return [triton.Config({"BLOCK_SIZE_M": m, "BLOCK_SIZE_N": n, "BLOCK_SIZE_K": k},
                          num_stages=s, num_warps=w) for m, n, k, s, w in ANCHOR_CONFIGS]


def back_to_back(fn, reps=40):
    # bench_util.h's bench_kernel_ms: the rest, 3 warm-up launches, reps launches between events
    if REST_S > 0:
        torch.cuda.synchronize()
        time.sleep(REST_S)
    for _ in range(3):
        fn()
    ev = [torch.cuda.Event(enable_timing=True) for _ in range(reps + 1)]
    for i in range(reps):
        ev[i].record()
        fn()
    ev[reps].record()
    torch.cuda.synchronize()
    return statistics.median(ev[i].elapsed_time(ev[i + 1]) for i in range(reps))


def main(argv):
    seed16 = "--seed16" in argv
    timer = back_to_back if "--b2b" in argv else bench
    inputs = next((a.split("=", 1)[1] for a in argv if a.startswith("--inputs=")), "rand")
    only = [a.split("=", 1)[1] for a in argv if a.startswith("--config=")]
    args = [a for a in argv[1:] if not a.startswith("--")]
    sizes = [int(x) for x in args[0].split(",")] if args else [2048, 3072, 4096]
    for size in sizes:
        if inputs == "randn":
            a, b = (torch.randn(size, size, device="cuda", dtype=torch.float16) for _ in range(2))
        elif inputs == "signed":
            a, b = ((torch.rand(size, size, device="cuda") * 2 - 1).half() for _ in range(2))
        else:
            a, b = (torch.rand(size, size, device="cuda", dtype=torch.float16) for _ in range(2))
        c = torch.empty(size, size, device="cuda", dtype=torch.float16)
        ref = torch.matmul(a, b)
        for cfg in configs(seed16):
            bm, bn, bk = (cfg.kwargs["BLOCK_SIZE_" + x] for x in "MNK")
            if only and "%dx%dx%d,%d,%d" % (bm, bn, bk, cfg.num_warps, cfg.num_stages) not in only:
                continue
            run = seed2_launcher(a, b, c, size, bm, bn, bk, cfg.num_warps, cfg.num_stages)

            try:
                run()
                torch.cuda.synchronize()
            except Exception as e:  # a config Triton cannot build (shared memory) is reported
                print("%d %dx%dx%d,%d,%d skipped: %s" % (size, bm, bn, bk, cfg.num_warps,
                                                         cfg.num_stages, str(e)[:80]), flush=True)
                continue
            err = (c.float() - ref.float()).abs().max().item()
            ms = timer(run)
            print("%d %dx%dx%d,%d,%d %.4f ms %.1f TFLOPS (max err %.3g)" % (
                size, bm, bn, bk, cfg.num_warps, cfg.num_stages, ms, 2 * size ** 3 / ms * 1e-9, err),
                flush=True)


if __name__ == "__main__":
    main(sys.argv)
