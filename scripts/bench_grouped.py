#!/usr/bin/env python3
# scripts/bench_grouped.py PTXDIR [--check] [--sizes=N,...]: Triton's tutorial 08 grouped GEMM
# (examples/grouped_matmul.tri), fp16, a group of four N x N x N matmuls per size (the tutorial's
# benchmark) and the tutorial's mixed group (1024, 512, 256, 128), as tric compiled it
# (scripts/bench_grouped_ptx.sh writes PTXDIR: one PTX per config) beside Triton running the very
# same .tri file at the same config and cuBLAS (torch.matmul on each problem in turn, as the
# tutorial's reference), in this one process, timed by triton.testing.do_bench (medians of three
# rounds, the order alternating; tric's PTX launched through the driver API on torch's stream:
# tric_ptx.py). Correct first: every side's C against torch's. --check: one launch of each, no
# timing.
import ctypes
import glob
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402
import triton  # noqa: E402
from tri_module import load_tri  # noqa: E402
from tric_ptx import TricPtx, median_times  # noqa: E402

ROUNDS = 3


def group_of(shapes):
    """A, B, C of each (M, N, K) and the tutorial's tables: addresses, sizes, leading dims."""
    torch.manual_seed(8)
    a = [torch.randn(m, k, device="cuda", dtype=torch.float16) for m, n, k in shapes]
    b = [torch.randn(k, n, device="cuda", dtype=torch.float16) for m, n, k in shapes]
    c = [torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16)
         for m, n, k in shapes]

    def table(ts):
        return torch.tensor([t.data_ptr() for t in ts], device="cuda", dtype=torch.int64)

    sizes = torch.tensor([x for s in shapes for x in (s[0], s[1], s[2])], device="cuda",
                         dtype=torch.int32)
    lds = torch.tensor([x for t in zip(a, b, c) for x in (t[0].stride(0), t[1].stride(0),
                                                          t[2].stride(0))],
                       device="cuda", dtype=torch.int32)
    return a, b, c, table(a), table(b), table(c), sizes, lds


def main(argv):
    if len(argv) < 2:
        sys.exit("usage: bench_grouped.py PTXDIR [--check] [--sizes=N,N]")
    ptxdir, check_only = argv[1], "--check" in argv[2:]
    sizes = [1024, 2048, 4096]
    for a in argv[2:]:
        if a.startswith("--sizes="):
            sizes = [int(x) for x in a.split("=", 1)[1].split(",")]
    torch.cuda.init()
    torch.empty(1, device="cuda")  # the primary context, current for the driver API
    cuda = ctypes.CDLL("libcuda.so.1")
    kern = load_tri("grouped_matmul").grouped_matmul_kernel
    print("# triton %s, torch %s, %s" % (triton.__version__, torch.__version__,
                                        torch.cuda.get_device_name()), flush=True)
    groups = [("4 x %d" % n, [(n, n, n)] * 4) for n in sizes]
    groups.append(("1024,512,256,128", [(s, s, s) for s in (1024, 512, 256, 128)]))
    for path in sorted(glob.glob(os.path.join(ptxdir, "grouped_*.ptx"))):
        name = os.path.basename(path)[8:-4]
        tric = TricPtx(cuda, path)
        k = tric.consts
        warps = int(tric.head["num_warps"])
        stages = int(re.search(r"_s(\d+)", name).group(1))
        num_sm = int(k["NUM_SM"])
        meta = dict(NUM_SM=num_sm, BLOCK_SIZE_M=int(k["BLOCK_SIZE_M"]),
                    BLOCK_SIZE_N=int(k["BLOCK_SIZE_N"]), BLOCK_SIZE_K=int(k["BLOCK_SIZE_K"]))
        for label, shapes in groups:
            a, b, c, ta, tb, tc, sz, ld = group_of(shapes)
            c_triton = [torch.full_like(x, float("nan")) for x in c]
            tc_triton = torch.tensor([x.data_ptr() for x in c_triton], device="cuda",
                                     dtype=torch.int64)
            tric_run = tric.launcher((num_sm,), [ta, tb, tc, sz, ld, len(shapes)])

            def triton_run():
                kern[(num_sm,)](ta, tb, tc_triton, sz, ld, len(shapes), num_warps=warps,
                                num_stages=stages, **meta)

            def cublas_run():
                for x, y in zip(a, b):
                    torch.matmul(x, y)

            tric_run()
            triton_run()
            torch.cuda.synchronize()
            worst = worst_triton = 0.0
            for x, y, z, zt in zip(a, b, c, c_triton):
                ref = torch.matmul(x, y).float()
                worst = max(worst, (z.float() - ref).abs().max().item())
                worst_triton = max(worst_triton, (zt.float() - ref).abs().max().item())
            tol = 1e-2 * max(s[2] for s in shapes) ** 0.5
            if not worst <= tol:
                sys.exit("%s %s: tric's C wrong, max |difference| %.3g" % (name, label, worst))
            same = all(torch.equal(z, zt) for z, zt in zip(c, c_triton))
            print("%s %s: tric vs torch %.3g, triton vs torch %.3g, tric vs triton %s" % (
                name, label, worst, worst_triton, "bit-identical" if same else "differs"),
                flush=True)
            if check_only:
                continue
            flops = sum(2.0 * m * n * kk for m, n, kk in shapes)
            sides = [("tric", tric_run), ("triton", triton_run), ("cublas", cublas_run)]
            t = median_times(sides, ROUNDS)
            print("%-22s %-18s tric %6.1f  triton %6.1f  cublas %6.1f  tric/triton %.3f  "
                  "tric/cublas %.3f TFLOPS" % (
                      name, label, flops / t["tric"] * 1e-9, flops / t["triton"] * 1e-9,
                      flops / t["cublas"] * 1e-9, t["triton"] / t["tric"],
                      t["cublas"] / t["tric"]), flush=True)


if __name__ == "__main__":
    main(sys.argv)
