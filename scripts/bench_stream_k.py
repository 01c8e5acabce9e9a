#!/usr/bin/env python3
# scripts/bench_stream_k.py PTXDIR [--sizes=N,...] [--check] [--only=TEXT]: seed 2's matmul (fp16,
# or bf16 where the PTX takes bf16 (SEED2_DTYPE=bf16); C = A B) as tric compiled it, each config as written (a program per tile) and with --stream-k
# (persistent, the last round of tiles split along K; scripts/bench_stream_k_ptx.sh writes
# PTXDIR), beside Triton running seed 2's kernel at the same config and cuBLAS (torch.matmul), in
# this one process, all timed by triton.testing.do_bench (median; tric's PTX launched through the
# driver API on torch's stream, persistent ones as tric's runtime launches them: tric_ptx.py).
# Correct first: every side's C against torch's, and a stream-K C twice in a row (the workspace's
# flags left zero). Three rounds, the order alternating; a summary line per size and config gives
# each side's TFLOPS (median of the rounds) and the ratios to cuBLAS. --check: one launch of each
# tric kernel (at 1024 and 3072 unless --sizes), no timing (for compute-sanitizer).
import ctypes
import glob
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402
import triton  # noqa: E402
from tric_ptx import TricPtx  # noqa: E402
from triton_seed2_report import seed2_launcher  # noqa: E402

ROUNDS = 3


def tric_launcher(k, a, b, c, size):
    bm, bn = int(k.consts["BLOCK_SIZE_M"]), int(k.consts["BLOCK_SIZE_N"])
    grid = (triton.cdiv(size, bm) * triton.cdiv(size, bn),)
    return k.launcher(grid, [a, b, c, size, size, size, a.stride(0), a.stride(1), b.stride(0),
                             b.stride(1), c.stride(0), c.stride(1)])


def config_of(path):
    m = re.search(r"seed2_(\d+)x(\d+)x(\d+)_w(\d+)_s(\d+)_(grid|sk)(\w*)\.ptx$", path)
    return tuple(int(x) for x in m.groups()[:5]), m.group(6) + m.group(7)


def main(argv):
    opts = dict(a[2:].split("=", 1) if "=" in a else (a[2:], "") for a in argv[2:])
    check_only = "check" in opts
    sizes = [int(x) for x in opts.get("sizes", "1024,3072" if check_only else
                                      "1024,2048,3072,4096,6144,8192").split(",")]
    paths = sorted(p for p in glob.glob(os.path.join(argv[1], "seed2_*.ptx"))
                   if opts.get("only", "") in os.path.basename(p))
    torch.cuda.init()
    torch.empty(1, device="cuda")
    cuda = ctypes.CDLL("libcuda.so.1")
    kernels = [(TricPtx(cuda, p), config_of(p), os.path.basename(p)) for p in paths]
    # the operands' type is the PTX's (every file of one folder takes the same)
    dtypes = {torch.bfloat16 if k.params[0].startswith("*bf16") else torch.float16
              for k, _, _ in kernels}
    if len(dtypes) != 1:
        sys.exit("%s: the PTX files take different operand types" % argv[1])
    dtype = dtypes.pop()
    print("# triton %s, torch %s, %s" % (triton.__version__, torch.__version__,
                                         torch.cuda.get_device_name()), flush=True)
    for size in sizes:
        torch.manual_seed(size)
        a = torch.rand(size, size, device="cuda", dtype=dtype) - 0.5
        b = torch.rand(size, size, device="cuda", dtype=dtype) - 0.5
        ref = torch.matmul(a, b)
        by_cfg = {}
        for k, (cfg, form), name in kernels:
            c = torch.full((size, size), float("nan"), device="cuda", dtype=dtype)
            run = tric_launcher(k, a, b, c, size)
            for attempt in (1, 2):
                c.fill_(float("nan"))
                run()
                torch.cuda.synchronize()
                err = (c.float() - ref.float()).abs().max().item()
                if not err <= 1e-2 * size ** 0.5:
                    sys.exit("%s at %d, launch %d: max error %g" % (name, size, attempt, err))
            if check_only:
                print("%d %s checked (max error %.3g)" % (size, name, err), flush=True)
                continue
            by_cfg.setdefault(cfg, {})["tric_" + form] = run
        if check_only:
            continue
        for cfg, sides in sorted(by_cfg.items()):
            bm, bn, bk, warps, stages = cfg
            c = torch.empty(size, size, device="cuda", dtype=dtype)
            sides["triton"] = seed2_launcher(a, b, c, size, bm, bn, bk, warps, stages)
            sides["triton"]()
            torch.cuda.synchronize()
            err = (c.float() - ref.float()).abs().max().item()
            if not err <= 1e-2 * size ** 0.5:
                sys.exit("triton at %d %s: max error %g" % (size, cfg, err))
            sides["cublas"] = lambda: torch.matmul(a, b)
            names = sorted(sides)
            times = {n: [] for n in names}
            for rnd in range(ROUNDS):
                for n in (names if rnd % 2 == 0 else names[::-1]):
                    times[n].append(triton.testing.do_bench(sides[n], warmup=25, rep=100,
                                                            return_mode="median"))
            tf = {n: 2 * size ** 3 / statistics.median(t) * 1e-9 for n, t in times.items()}
            print("%d %dx%dx%d,%d,%d " % (size, bm, bn, bk, warps, stages) +
                  " ".join("%s %.1f" % (n, tf[n]) for n in names) + " | /cublas " +
                  " ".join("%s %.3f" % (n, tf[n] / tf["cublas"]) for n in names if n != "cublas"),
                  flush=True)


if __name__ == "__main__":
    main(sys.argv)
