#!/usr/bin/env python3
# scripts/bench_fp8.py DIR [SIZES] [--rounds=N] [--no-triton]: issue 22's fp8 bar. Seed 2's
# kernel_matmul with fp8 e4m3 A [M, K] and B read along K (storage [N, K]), fp16 C, as tric
# compiled it (DIR/fp8_*.ptx from scripts/fp8_ptx.sh, one file a config), beside cuBLAS's fp8 GEMM
# (torch._scaled_mm, scales 1, fp16 out, with and without use_fast_accum: tric's wgmma accumulates
# as fast_accum does, with no promotion) and Triton running the same examples/matmul.tri at each
# tric config (ws files excepted: Triton runs seed 2's loop as written; _p, _pws, _pp files are
# tutorial 09's persistent kernel, launched on min(NUM_SMS, tiles) programs; _pr files are
# bench/fp8_promoted.tri, which Triton runs too, with max_num_imprecise_acc; _ppr, _ppws files are
# bench/fp8_promoted_persistent.tri, tric only), ALL in this one process,
# timed by triton.testing.do_bench (median, its L2 flush) in rounds whose order alternates.
# Every output is checked first against an fp32 product of the same fp8 values. M = N = K = each
# size (default 2048,4096,8192). Prints every candidate's TFLOPS, then per size each side's best
# and tric / cuBLAS, tric / Triton (throughput ratios: > 1 is tric faster).
# Runs on the GPU machine (torch, Triton); elsewhere `python3 -m py_compile` checks it.
import ctypes
import glob
import os
import re
import statistics
import sys
import tempfile

os.environ.setdefault("TRITON_CACHE_DIR", tempfile.mkdtemp(prefix="tcache"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402
from tri_module import BENCH, load_tri  # noqa: E402
from tric_ptx import TricPtx  # noqa: E402

FP8 = torch.float8_e4m3fn


def tric_run(cuda, path, a, bt, c, size):
    k = TricPtx(cuda, path)
    bm, bn = int(k.consts["BLOCK_SIZE_M"]), int(k.consts["BLOCK_SIZE_N"])
    tiles = triton.cdiv(size, bm) * triton.cdiv(size, bn)
    if "NUM_SMS" in k.consts:  # tutorial 09's persistent kernel: (a, b [N, K], c, M, N, K)
        return k.launcher((min(int(k.consts["NUM_SMS"]), tiles),), [a, bt, c, size, size, size])
    # B [K, N] read through its [N, K] storage: stride_bk 1, stride_bn K
    return k.launcher((tiles,),
                      [a, bt, c, size, size, size, a.stride(0), 1, 1, bt.stride(0), c.stride(0), 1])


def triton_run(kernel, cfg, a, bt, c, size, promoted=False):
    """seed 2's kernel_matmul on Triton at cfg, or (promoted) bench/fp8_promoted.tri's with
    max_num_imprecise_acc = BLOCK_SIZE_K, as tric's _pr files"""
    bm, bn, bk, warps, stages = cfg
    grid = (triton.cdiv(size, bm) * triton.cdiv(size, bn),)
    consts = dict(MAX_IMPRECISE=bk) if promoted else dict(T_C=tl.float16, T_ACC=tl.float32)

    def run():
        kernel[grid](a, bt, c, size, size, size, a.stride(0), 1, 1, bt.stride(0), c.stride(0), 1,
                     BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn, BLOCK_SIZE_K=bk, GROUP_SIZE_M=8,
                     num_warps=warps, num_stages=stages, **consts)
    return run


def main(argv):
    args = [a for a in argv[1:] if not a.startswith("--")]
    opts = dict(a[2:].split("=", 1) if "=" in a else (a[2:], "1") for a in argv[1:] if a.startswith("--"))
    if not args:
        sys.exit("usage: bench_fp8.py DIR [SIZES] [--rounds=N] [--no-triton]")
    sizes = [int(x) for x in (args[1] if len(args) > 1 else "2048,4096,8192").split(",")]
    rounds = int(opts.get("rounds", 3))
    torch.cuda.init()
    torch.empty(1, device="cuda")
    cuda = ctypes.CDLL("libcuda.so.1")
    kernel = load_tri("matmul").kernel_matmul
    kernel = getattr(kernel, "fn", kernel)  # the seed's @triton.autotune: its kernel, one config a call
    promoted = load_tri("fp8_promoted", BENCH).kernel_matmul_promoted
    paths = sorted(glob.glob(os.path.join(args[0], "fp8_*.ptx")))
    print("# %s, triton %s, torch %s, %d rounds" % (torch.cuda.get_device_name(), triton.__version__,
                                                   torch.__version__, rounds))
    failed = False
    for size in sizes:
        torch.manual_seed(8)
        a = (torch.randn(size, size, device="cuda") * 0.5).to(FP8)
        bt = (torch.randn(size, size, device="cuda") * 0.5).to(FP8)  # B^T: [N, K]
        ref = a.float() @ bt.float().t()
        one = torch.ones((), device="cuda")
        cands = []
        for p in paths:
            c = torch.empty(size, size, device="cuda", dtype=torch.float16)
            name = os.path.basename(p)[4:-4]
            cands.append(("tric", name, tric_run(cuda, p, a, bt, c, size), c))
            m = re.match(r"(\d+)x(\d+)x(\d+)_w(\d+)_s(\d+)(_pr)?$", name)
            if m and "no-triton" not in opts:
                c2 = torch.empty_like(c)
                cfg = tuple(int(x) for x in m.groups()[:5])
                run = triton_run(promoted if m.group(6) else kernel, cfg, a, bt, c2, size,
                                 promoted=bool(m.group(6)))
                cands.append(("triton", name, run, c2))
        for fast in (False, True):
            def cublas(fast=fast):
                return torch._scaled_mm(a, bt.t(), scale_a=one, scale_b=one,
                                        out_dtype=torch.float16, use_fast_accum=fast)
            cands.append(("cublas", "_scaled_mm" + (",fast_accum" if fast else ""), cublas, None))
        usable = []
        for side, name, run, c in cands:
            try:
                if c is None:
                    c = run()
                else:
                    c.fill_(float("nan"))
                    run()
                torch.cuda.synchronize()
            except Exception as e:  # Triton: out of shared memory
                print("# %d %s %s: skipped: %s" % (size, side, name, str(e).splitlines()[0][:120]))
                continue
            err = (c.float() - ref).abs().max().item()
            if not err <= 2e-2 * ref.abs().max().item():
                print("# %d %s %s: WRONG, max |difference| %.3g" % (size, side, name, err))
                failed = True
                continue
            usable.append((side, name, run))
        times = {(s, n): [] for s, n, _ in usable}
        for r in range(rounds):
            for s, n, run in (usable if r % 2 == 0 else usable[::-1]):
                times[(s, n)].append(triton.testing.do_bench(run, warmup=25, rep=100,
                                                             return_mode="median"))
        best = {}
        for (s, n), ts in times.items():
            ms = statistics.median(ts)
            print("%5d %-7s %-24s %.4f ms %7.1f TFLOPS" % (size, s, n, ms, 2 * size ** 3 / ms * 1e-9),
                  flush=True)
            if s not in best or ms < best[s][1]:
                best[s] = (n, ms)
        tf = {s: 2 * size ** 3 / best[s][1] * 1e-9 for s in best}
        plain = 2 * size ** 3 / statistics.median(times[("cublas", "_scaled_mm")]) * 1e-9
        line = "%5d best: tric %s %.1f, cuBLAS %.1f (best of both accumulations; %.1f without "\
            "fast_accum), tric / cuBLAS %.3f (%.3f)" % (size, best["tric"][0], tf["tric"], tf["cublas"],
                                                       plain, tf["tric"] / tf["cublas"], tf["tric"] / plain)
        if "triton" in tf:
            line += ", Triton %s %.1f, tric / Triton %.3f" % (best["triton"][0], tf["triton"],
                                                               tf["tric"] / tf["triton"])
        print(line, flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
