#!/usr/bin/env python3
# scripts/bench_persistent_ws.py PTXDIR [--check] [--tric-only] [--only=TEXT] [--sizes=N,...]: tutorial 09's
# persistent matmul through descriptors (examples/persistent_desc_matmul.tri), fp16, C = A B^T
# with B [N, K], as tric compiled it (scripts/bench_persistent_ws_ptx.sh writes PTXDIR: one PTX
# per config, WARP_SPECIALIZE and FLATTEN) beside Triton running the very same .tri file at the same
# config, WARP_SPECIALIZE and FLATTEN, and cuBLAS (torch.matmul), in this one process, all timed by
# triton.testing.do_bench (median; tric's PTX launched through the driver API on torch's stream:
# tric_ptx.py). Correct first: every side's C against torch's. Three rounds, the order
# alternating; a summary line per size and config gives each side's TFLOPS (median of the
# rounds) and the ratios. --check: one launch of each kernel (at 1024 unless --sizes), no timing (for
# compute-sanitizer); --tric-only: no Triton; --only=TEXT: the PTX files whose name holds TEXT.
# A PTX compiled for bf16 (*bf16 parameters; PDESC_DTYPE=bf16) runs on bf16 A, B and C.
# A PTX compiled for fp8 e4m3 A and B (its signature's first parameter *fp8e4nv) runs on fp8
# inputs, checked against an fp32 product and timed beside cuBLAS's torch._scaled_mm (scales 1,
# fp16 C, use_fast_accum: wgmma's fp8 accumulation).
import ctypes
import glob
import os
import re
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402
import triton  # noqa: E402
from tri_module import load_tri  # noqa: E402
from tric_ptx import TricPtx  # noqa: E402


ROUNDS = 3


def alloc(size, alignment, stream):
    """Global scratch for Triton's device-side tensor descriptors."""
    return torch.empty(size, device="cuda", dtype=torch.int8)


def sides_for(cuda, path, kern, size, num_sms):
    tric = TricPtx(cuda, path)
    k = tric.consts
    bm, bn = int(k["BLOCK_SIZE_M"]), int(k["BLOCK_SIZE_N"])
    ws = k["WARP_SPECIALIZE"] == "True"
    warps = int(tric.head["num_warps"])
    stages = int(re.search(r"_s(\d+)_", os.path.basename(path)).group(1))
    torch.manual_seed(9)
    a = torch.randn(size, size, device="cuda", dtype=torch.float16) * 0.5
    b = torch.randn(size, size, device="cuda", dtype=torch.float16) * 0.5
    fp8 = tric.params[0].startswith("*fp8e4nv")
    if fp8:
        a, b = a.to(torch.float8_e4m3fn), b.to(torch.float8_e4m3fn)
    c_dtype = torch.float16
    if tric.params[0].startswith("*bf16"):  # A, B and C bf16 (PDESC_DTYPE=bf16)
        a, b, c_dtype = a.to(torch.bfloat16), b.to(torch.bfloat16), torch.bfloat16
    tiles = triton.cdiv(size, bm) * triton.cdiv(size, bn)
    grid = (min(num_sms, tiles),)
    c_tric = torch.full((size, size), float("nan"), device="cuda", dtype=c_dtype)
    c_triton = torch.full_like(c_tric, float("nan"))
    tric_run = tric.launcher(grid, [a, b, c_tric, size, size, size])
    meta = dict(BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn, BLOCK_SIZE_K=int(k["BLOCK_SIZE_K"]),
                GROUP_SIZE_M=int(k["GROUP_SIZE_M"]), NUM_SMS=num_sms, WARP_SPECIALIZE=ws,
                EPILOGUE_SUBTILE=k.get("EPILOGUE_SUBTILE") == "True",
                FLATTEN=k.get("FLATTEN") == "True")

    def triton_run():
        return kern[grid](a, b, c_triton, size, size, size, num_warps=warps,
                          num_stages=stages, **meta)

    one = torch.ones((), device="cuda")

    def cublas_run():
        if fp8:
            return torch._scaled_mm(a, b.T, scale_a=one, scale_b=one, out_dtype=torch.float16,
                                    use_fast_accum=True)
        return torch.matmul(a, b.T)
    return tric_run, triton_run, cublas_run, (a, b, c_tric, c_triton)


def main(argv):
    if len(argv) < 2:
        sys.exit("usage: bench_persistent_ws.py PTXDIR [--check] [--tric-only] [--only=TEXT] "
                 "[--sizes=N,N]")
    ptxdir, check_only, tric_only = argv[1], "--check" in argv[2:], "--tric-only" in argv[2:]
    sizes = [1024] if check_only else [1024, 2048, 3072, 4096, 8192]
    for a in argv[2:]:
        if a.startswith("--sizes="):
            sizes = [int(x) for x in a.split("=", 1)[1].split(",")]
    torch.cuda.init()
    torch.empty(1, device="cuda")
    global START
    START = time.time()
    cuda = ctypes.CDLL("libcuda.so.1")
    triton.set_allocator(alloc)
    kern = load_tri("persistent_desc_matmul").matmul_kernel_descriptor_persistent
    num_sms = torch.cuda.get_device_properties(0).multi_processor_count
    print("# triton %s, torch %s, %s, %d SMs" % (triton.__version__, torch.__version__,
                                                 torch.cuda.get_device_name(), num_sms), flush=True)
    paths = sorted(glob.glob(os.path.join(ptxdir, "pdesc_*.ptx")))
    for a in argv[2:]:
        if a.startswith("--only="):
            paths = [p for p in paths if a.split("=", 1)[1] in os.path.basename(p)]
    for size in sizes:
        for path in paths:
            name = os.path.basename(path)[6:-4]
            tric_run, triton_run, cublas_run, (a, b, c_tric, c_triton) = sides_for(
                cuda, path, kern, size, num_sms)
            tric_run()
            try:
                if tric_only:
                    raise RuntimeError("--tric-only")
                triton_run()
                has_triton = True
            except Exception as e:  # noqa: BLE001 (a config Triton refuses is reported)
                print("%s %d: triton refused: %s" % (name, size, str(e).splitlines()[0][:200]))
                has_triton = False
            torch.cuda.synchronize()
            fp8 = a.dtype == torch.float8_e4m3fn
            ref = (a.float() @ b.float().T) if fp8 else torch.matmul(a, b.T)
            # fp8: wgmma's fp8 accumulation drifts with K (bench_fp8.py's bound)
            tol = 2e-2 * ref.abs().max().item() if fp8 else 1e-2 * size ** 0.5
            d = (c_tric.float() - ref.float()).abs().max().item()
            if not d <= tol:
                sys.exit("%s %d: tric's C wrong, max |difference| %.3g" % (name, size, d))
            if has_triton:
                dt = (c_triton.float() - ref.float()).abs().max().item()
                print("%s %d: tric vs torch %.3g, triton vs torch %.3g, tric vs triton %s" % (
                    name, size, d, dt,
                    "bit-identical" if torch.equal(c_tric, c_triton) else "differs"), flush=True)
            if check_only:
                continue
            flops = 2.0 * size ** 3
            sides = [("tric", tric_run), ("cublas", cublas_run)]
            if has_triton:
                sides.append(("triton", triton_run))
            times = {s: [] for s, _ in sides}
            for rnd in range(ROUNDS):
                for s, run in (sides if rnd % 2 == 0 else sides[::-1]):
                    times[s].append(triton.testing.do_bench(run, warmup=25, rep=50,
                                                            return_mode="median"))
            t = {s: statistics.median(v) for s, v in times.items()}
            line = "%-28s %5d  tric %6.1f  cublas %6.1f" % (name, size, flops / t["tric"] * 1e-9,
                                                          flops / t["cublas"] * 1e-9)
            if has_triton:
                line += "  triton %6.1f  tric/triton %.3f" % (flops / t["triton"] * 1e-9,
                                                             t["triton"] / t["tric"])
            line += "  tric/cublas %.3f TFLOPS" % (t["cublas"] / t["tric"])
            print(line + "  (%.0f s)" % (time.time() - START), flush=True)


if __name__ == "__main__":
    main(sys.argv)
