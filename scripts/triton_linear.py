# Triton's side of bench/bench_linear: the same linear layer y = relu(x @ w.T + b)
# (examples/linear.tri, written here in Triton with the same code), the same fixed configs (no
# autotuning), sizes, orientations and dtypes, timed on this GPU, with torch/cuBLAS
# (relu(F.linear(x, w, b))) as a reference line per case.
#
# Run on the GPU machine, from the repo root:
#   PYTHONUNBUFFERED=1 python3 scripts/triton_linear.py [SIZE...] [--config BMxBNxBK,WARPS,STAGES]...
#       [--dtype=fp16|bf16|both] [--orient=row|col|both] [--csv=FILE] [--all] [--no-check]
#       [--no-cublas]
# Defaults: M = N = K = 4096, 8192, 4100; config 128x128x64, 4 warps, 4 stages; both dtypes and
# orientations. x row-major is torch.randn(M, K) (strides K, 1), x column-major torch.randn(K, M).t()
# (strides 1, M); w [N, K] row-major; b [N]; y [M, N] of the inputs' dtype. Triton's JIT
# specializes the integer arguments itself (divisible by 16, equal to 1), as bench_linear's
# signatures do: 4096 and 8192 get the ":16" kernel, 4100 the open one.
#
# Each (dtype, orientation, config) is first checked against torch at 200 x 136 x 104 and
# 256 x 144 x 320 (relative error ||y - ref|| / ||ref|| < 1e-2, ref in fp32 from the same inputs);
# then triton.testing.do_bench(..., return_mode="median") (warmup 50 ms, rep 300 ms, as
# scripts/triton_anchor.py). The table has bench_linear's columns (provider first); the CSV
# bench_util.h's BENCH_CSV_HEADER columns.
import argparse
import csv
import os
import sys
import tempfile
import time

os.environ.setdefault("TRITON_CACHE_DIR", tempfile.mkdtemp(prefix="tcache"))

import torch
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def linear_kernel(x_ptr, w_ptr, b_ptr, y_ptr, M, N, K,
                  stride_xm, stride_xk, stride_wn, stride_wk, stride_ym, stride_yn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    x_ptrs = x_ptr + offs_m[:, None] * stride_xm + offs_k[None, :] * stride_xk
    w_ptrs = w_ptr + offs_n[None, :] * stride_wn + offs_k[:, None] * stride_wk
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        x = tl.load(x_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
        w = tl.load(w_ptrs, mask=(offs_n[None, :] < N) & (offs_k[:, None] < k_left), other=0.0)
        acc = tl.dot(x, w, acc)
        x_ptrs += BLOCK_K * stride_xk
        w_ptrs += BLOCK_K * stride_wk
    bias = tl.load(b_ptr + offs_n, mask=offs_n < N, other=0.0)
    acc = acc + bias[None, :].to(tl.float32)
    acc = tl.maximum(acc, 0.0)
    y_ptrs = y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :] * stride_yn
    tl.store(y_ptrs, acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16}
ORIENTS = ("x_row", "x_col")
CSV_HEADER = ["provider", "bench", "kernel", "arch", "orient", "sig", "dtype", "M", "N", "K",
              "config", "time_us", "tflops", "row"]


def parse_config(text):
    try:
        blocks, warps, stages = text.split(",")
        bm, bn, bk = (int(v) for v in blocks.split("x"))
        return (bm, bn, bk, int(warps), int(stages))
    except ValueError:
        raise argparse.ArgumentTypeError("config must be BMxBNxBK,WARPS,STAGES, got %r" % text)


def config_name(c):
    return "%dx%dx%d,w%d,s%d" % c


def sig_kind(M, N, K):
    return ":16" if M % 16 == 0 and N % 16 == 0 and K % 16 == 0 else "open"


def make_x(M, K, dtype, orient, gen=None):
    if orient == "x_row":
        return torch.randn(M, K, device="cuda", dtype=dtype, generator=gen)
    return torch.randn(K, M, device="cuda", dtype=dtype, generator=gen).t()


def linear(x, w, b, y, cfg):
    bm, bn, bk, warps, stages = cfg
    M, K = x.shape
    N = w.shape[0]
    grid = (triton.cdiv(M, bm), triton.cdiv(N, bn))
    linear_kernel[grid](x, w, b, y, M, N, K,
                        x.stride(0), x.stride(1), w.stride(0), w.stride(1), y.stride(0), y.stride(1),
                        BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, num_warps=warps, num_stages=stages)
    return y


def cublas(x, w, b):
    return torch.relu_(F.linear(x, w, b))


# TRIC_BENCH_REST_MS: the GPU idles that long before each timing, as tric's benchmarks do
# (bench/bench_util.h bench_rest), so neither side is timed right after the other's load.
REST_S = float(os.environ.get("TRIC_BENCH_REST_MS", "0") or 0) / 1000.0


def bench(fn):
    if REST_S > 0:
        torch.cuda.synchronize()
        time.sleep(REST_S)
    return triton.testing.do_bench(fn, warmup=50, rep=300, return_mode="median")


def rel_error(got, ref):
    d = (got.float() - ref.float())
    if not torch.isfinite(got.float()).all():
        return float("inf")
    n = ref.float().norm().item()
    return d.norm().item() / n if n > 0 else d.norm().item()


def check(dtype_name, orient, cfg, M, N, K):
    dt = DTYPES[dtype_name]
    gen = torch.Generator(device="cuda").manual_seed(M * 7 + N * 3 + K)
    x = make_x(M, K, dt, orient, gen)
    w = torch.randn(N, K, device="cuda", dtype=dt, generator=gen)
    b = torch.randn(N, device="cuda", dtype=dt, generator=gen)
    y = torch.full((M, N), float("nan"), device="cuda", dtype=dt)
    linear(x, w, b, y, cfg)
    torch.cuda.synchronize()
    ref = torch.relu(x.float() @ w.float().t() + b.float())
    err = rel_error(y, ref)
    ok = err < 1e-2
    print("%-52s %-20s rel error %-10.3g %s" % ("linear_kernel %s %s %dx%dx%d" % (orient, dtype_name, M, N, K),
                                                config_name(cfg), err, "OK" if ok else "MISMATCH"), flush=True)
    return ok


def is_resource_error(e):
    name = type(e).__name__
    return "OutOfResources" in name or "shared memory" in str(e) or "out of resource" in str(e).lower()


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("sizes", nargs="*", type=int, default=[4096, 8192, 4100])
    ap.add_argument("--config", action="append", type=parse_config, default=None)
    ap.add_argument("--dtype", choices=["fp16", "bf16", "both"], default="both")
    ap.add_argument("--orient", choices=["row", "col", "both"], default="both")
    ap.add_argument("--csv", default=None)
    ap.add_argument("--all", action="store_true")
    ap.add_argument("--no-check", action="store_true")
    ap.add_argument("--no-cublas", action="store_true")
    args = ap.parse_args()
    configs = args.config or [(128, 128, 64, 4, 4)]
    dtypes = ["fp16", "bf16"] if args.dtype == "both" else [args.dtype]
    orients = list(ORIENTS) if args.orient == "both" else ["x_" + args.orient]

    props = torch.cuda.get_device_properties(0)
    print("# device: %s (%d SMs), torch %s, triton %s" % (props.name, props.multi_processor_count,
                                                         torch.__version__, triton.__version__), flush=True)
    arch = "sm_%d%d" % (props.major, props.minor)

    usable = {}
    failed = False
    for d in dtypes:
        for o in orients:
            for cfg in configs:
                usable[(d, o, cfg)] = True
                if args.no_check:
                    continue
                try:
                    ok = check(d, o, cfg, 200, 136, 104) and check(d, o, cfg, 256, 144, 320)
                    failed |= not ok
                except Exception as e:  # a config Triton cannot compile or launch
                    usable[(d, o, cfg)] = False
                    why = "shared memory does not fit" if is_resource_error(e) else "does not compile"
                    print("# linear_kernel %s %s %s: skipped: %s: %s" % (
                        o, d, config_name(cfg), why, str(e).splitlines()[0] if str(e) else type(e).__name__), flush=True)
    if args.no_check:
        print("# correctness checks skipped (--no-check)")
    elif failed:
        print("# WARNING: a correctness check failed (see above); timings follow anyway")

    out = open(args.csv, "w", newline="") if args.csv else None
    writer = csv.writer(out) if out else None
    if writer:
        writer.writerow(CSV_HEADER)

    def row(provider, kernel, o, sig, d, s, cfg_name, ms, kind):
        tflops = 2.0 * s * s * s / (ms * 1e-3) / 1e12 if ms > 0 else 0.0
        if writer:
            writer.writerow([provider, "linear", kernel, arch, o, sig, d,
                             s, s, s, cfg_name, "%.3f" % (ms * 1000), "%.3f" % tflops, kind])
            out.flush()
        return tflops

    print("%-10s %-8s %-5s %6s %-5s %22s %10s %8s" % ("# provider", "orient", "dtype", "M=N=K", "sig",
                                                     "best config", "time_us", "TFLOPS"), flush=True)
    for s in args.sizes:
        sig = sig_kind(s, s, s)
        for d in dtypes:
            dt = DTYPES[d]
            for o in orients:
                x = make_x(s, s, dt, o)
                w = torch.randn(s, s, device="cuda", dtype=dt)
                b = torch.randn(s, device="cuda", dtype=dt)
                y = torch.empty(s, s, device="cuda", dtype=dt)
                best, best_cfg = 0.0, None
                for cfg in configs:
                    if not usable[(d, o, cfg)]:
                        continue
                    try:
                        ms = bench(lambda: linear(x, w, b, y, cfg))
                    except Exception as e:
                        why = "shared memory does not fit" if is_resource_error(e) else "does not compile"
                        print("# linear_kernel %s %s %d %s: skipped: %s: %s" % (
                            o, d, s, config_name(cfg), why, str(e).splitlines()[0] if str(e) else type(e).__name__),
                            flush=True)
                        continue
                    if best_cfg is None or ms < best:
                        best, best_cfg = ms, cfg
                    if args.all:
                        tf = row("triton", "linear_kernel", o, sig, d, s, config_name(cfg), ms, "config")
                        print("#   triton  %-8s %-5s %6d %-5s %22s %10.1f %8.1f" % (
                            o, d, s, sig, config_name(cfg), ms * 1000, tf), flush=True)
                name = config_name(best_cfg) if best_cfg else "-"
                tf = row("triton", "linear_kernel", o, sig, d, s, name, best, "best")
                print("%-10s %-8s %-5s %6d %-5s %22s %10.1f %8.1f" % ("triton", o, d, s, sig, name, best * 1000, tf),
                      flush=True)
                if not args.no_cublas:
                    ref = cublas(x, w, b)
                    if best_cfg is not None:
                        err = rel_error(linear(x, w, b, y, best_cfg), ref)
                        if not err < 1e-2:
                            print("# WARNING: triton vs cuBLAS at %d %s %s: rel error %.3g" % (s, o, d, err))
                    del ref
                    ms = bench(lambda: cublas(x, w, b))
                    tf = row("cublas", "F.linear+relu", o, sig, d, s, "-", ms, "best")
                    print("%-10s %-8s %-5s %6d %-5s %22s %10.1f %8.1f" % ("cublas", o, d, s, sig, "F.linear+relu",
                                                                         ms * 1000, tf), flush=True)
                del x, w, b, y
                torch.cuda.empty_cache()
    if out:
        out.close()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
