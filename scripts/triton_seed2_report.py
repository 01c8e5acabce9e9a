#!/usr/bin/env python3
# scripts/triton_seed2_report.py --seed2-report-csv PATH [--quick] [--sizes=A,B,...]
#     [--groups=0,8,16] [--no-torch]
# The Triton side of seed 2's report (bench/bench_seed2_report.c is tric's and cuBLAS's): the
# seed's kernel_matmul exactly as the seed writes it (its 16 configs, key M, N, K, T_C and T_ACC
# constexprs, the GROUP_SIZE_M == 0 branch), autotuned by Triton at M = N = K = 1024 i (i = 1..32;
# --quick: 1024, 4096, 8192) with GROUP_SIZE_M 0, 8 and 16 (providers triton_gm_0, triton_gm_8,
# triton_gm_16), and torch.matmul (provider torch), on fp16 torch.rand inputs. Writes the CSV
# columns bench_seed2_report writes: provider,M,N,K,ms,tflops,config,tune_ms.
#   - tune_ms: the first call's wall time at that size, synchronized (at the first size it also
#     compiles the 16 configs: TRITON_CACHE_DIR is a fresh directory), as tric's first launch;
#   - ms: triton.testing.do_bench (warmup 25 ms, rep 100 ms, L2 flushed before each launch, the
#     median), after TRIC_BENCH_REST_MS of idle GPU, as bench_seed2_report times tric and cuBLAS;
#   - check: each provider's C against torch.matmul (max abs difference printed).
# scripts/triton_anchor.py times a 13-config, masked variant and runs its figures at import, so
# the little it shares (the rest before do_bench) is written here again.
# Runs on the GPU machine (torch + Triton); elsewhere `python3 -m py_compile` checks it.
import csv
import os
import sys
import tempfile
import time

os.environ.setdefault("TRITON_CACHE_DIR", tempfile.mkdtemp(prefix="tcache"))
import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402


def get_cuda_autotune_config():
    # The seed's list, in its order: (BLOCK_SIZE_M, BLOCK_SIZE_N, BLOCK_SIZE_K, num_stages, num_warps).
    shapes = [(128, 256, 64, 3, 8), (64, 256, 32, 4, 4), (128, 128, 32, 4, 4), (128, 64, 32, 4, 4),
              (64, 128, 32, 4, 4), (128, 32, 32, 4, 4), (64, 32, 32, 5, 2), (32, 64, 32, 5, 2),
              (128, 256, 128, 3, 8), (256, 128, 128, 3, 8), (256, 64, 128, 4, 4),
              (64, 256, 128, 4, 4), (128, 128, 128, 4, 4), (128, 64, 64, 4, 4),
              (64, 128, 64, 4, 4), (128, 32, 64, 4, 4)]
    return [triton.Config({"BLOCK_SIZE_M": m, "BLOCK_SIZE_N": n, "BLOCK_SIZE_K": k},
                          num_stages=s, num_warps=w) for m, n, k, s, w in shapes]


@triton.jit
def kernel_matmul(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                  stride_cm, stride_cn, BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr,
                  BLOCK_SIZE_K: tl.constexpr, GROUP_SIZE_M: tl.constexpr, T_C: tl.constexpr,
                  T_ACC: tl.constexpr):
    pid = tl.program_id(0)
    if GROUP_SIZE_M == 0:
        pid_m = pid // tl.cdiv(N, BLOCK_SIZE_N)
        pid_n = pid % tl.cdiv(N, BLOCK_SIZE_N)
    else:
        num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
        num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
        num_pid_in_group = GROUP_SIZE_M * num_pid_n
        group_id = pid // num_pid_in_group
        first_pid_m = group_id * GROUP_SIZE_M
        group_size_m = tl.minimum(num_pid_m - first_pid_m, GROUP_SIZE_M)
        pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
        pid_n = (pid % num_pid_in_group) // group_size_m
    offs_am = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_bn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    accumulator = tl.zeros([BLOCK_SIZE_M, BLOCK_SIZE_N], dtype=T_ACC)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        a = tl.load(a_ptrs + k * BLOCK_SIZE_K * stride_ak)
        b = tl.load(b_ptrs + k * BLOCK_SIZE_K * stride_bk)
        accumulator += tl.dot(a, b)
    c = accumulator.to(T_C)
    offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + offs_cm[:, None] * stride_cm + offs_cn[None, :] * stride_cn
    tl.store(c_ptrs, c)


# The seed's @triton.autotune(configs=get_cuda_autotune_config(), key=["M", "N", "K"]), one
# autotuner per GROUP_SIZE_M. Triton's autotuner keys its choice on M, N, K only, so one decorated
# kernel tunes at the first GROUP_SIZE_M of a size and gives that config to the others unmeasured;
# tric compiles (and tunes) a module per GROUP_SIZE_M, and so does this. (The seed's own sweep
# measured GROUP_SIZE_M 16 three times: its lambdas read the loop variable i after the loop.)
TUNED = {}


def tuned_kernel(group_size_m):
    if group_size_m not in TUNED:
        TUNED[group_size_m] = triton.autotune(configs=get_cuda_autotune_config(),
                                              key=["M", "N", "K"])(kernel_matmul)
    return TUNED[group_size_m]


def triton_matmul(a, b, c, group_size_m):
    # The seed's triton_matmul with C given (allocating it each call would time torch.empty too).
    M, K = a.shape
    N = b.shape[1]
    grid = lambda META: [triton.cdiv(M, META["BLOCK_SIZE_M"]) * triton.cdiv(N, META["BLOCK_SIZE_N"])]
    tuned_kernel(group_size_m)[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                        c.stride(0), c.stride(1), GROUP_SIZE_M=group_size_m, T_C=tl.float16,
                        T_ACC=tl.float32)
    return c


def seed2_launcher(a, b, c, size, bm, bn, bk, warps, stages):
    """One config of kernel_matmul on square fp16 or bf16 a @ b -> c (GROUP_SIZE_M 8, fp32
    accumulator, T_C c's dtype), as a function of no arguments that launches it (for do_bench and
    timing loops)."""
    t_c = {torch.float32: tl.float32, torch.bfloat16: tl.bfloat16}.get(c.dtype, tl.float16)
    grid = (triton.cdiv(size, bm) * triton.cdiv(size, bn),)

    def run():
        kernel_matmul[grid](a, b, c, size, size, size, a.stride(0), a.stride(1), b.stride(0),
                            b.stride(1), c.stride(0), c.stride(1), BLOCK_SIZE_M=bm,
                            BLOCK_SIZE_N=bn, BLOCK_SIZE_K=bk, GROUP_SIZE_M=8, T_C=t_c,
                            T_ACC=tl.float32, num_warps=warps, num_stages=stages)
    return run


# TRIC_BENCH_REST_MS: the GPU idles that long before each timing, as bench/bench_util.h's
# bench_rest does for tric and cuBLAS (scripts/seed2_report.sh sets the same value for both).
REST_S = float(os.environ.get("TRIC_BENCH_REST_MS", "0") or 0) / 1000.0


def bench(fn):
    if REST_S > 0:
        torch.cuda.synchronize()
        time.sleep(REST_S)
    return triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median")


def config_text(cfg):
    if cfg is None:
        return "-"
    kw = ", ".join("%s=%s" % kv for kv in cfg.kwargs.items())
    return "%s, num_warps=%s, num_stages=%s" % (kw, cfg.num_warps, cfg.num_stages)


def parse_ints(text):
    return [int(x) for x in text.split(",") if x.strip()]


def main(argv):
    path = None
    sizes = [1024 * i for i in range(1, 33)]
    groups = [0, 8, 16]
    torch_line = True
    i = 1
    while i < len(argv):
        a = argv[i]
        if a == "--seed2-report-csv" and i + 1 < len(argv):
            path = argv[i + 1]
            i += 1
        elif a.startswith("--seed2-report-csv="):
            path = a.split("=", 1)[1]
        elif a == "--quick":
            sizes = [1024, 4096, 8192]
        elif a.startswith("--sizes="):
            sizes = parse_ints(a.split("=", 1)[1])
        elif a.startswith("--groups="):
            groups = parse_ints(a.split("=", 1)[1])
        elif a == "--no-torch":
            torch_line = False
        else:
            print("usage: triton_seed2_report.py --seed2-report-csv PATH [--quick] [--sizes=A,B] "
                  "[--groups=0,8,16] [--no-torch]", file=sys.stderr)
            return 2
        i += 1
    if not path:
        print("triton_seed2_report.py: --seed2-report-csv PATH is required", file=sys.stderr)
        return 2
    props = torch.cuda.get_device_properties(0)
    print("# %s, torch %s, triton %s, TRITON_CACHE_DIR %s, rest %.0f ms" % (
        props.name, torch.__version__, triton.__version__, os.environ["TRITON_CACHE_DIR"],
        REST_S * 1e3), flush=True)
    torch.manual_seed(3407)
    failed = False
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["provider", "M", "N", "K", "ms", "tflops", "config", "tune_ms"])
        print("%-13s %6s %10s %8s %10s %10s  %s" % ("# provider", "M=N=K", "ms", "TFLOPS", "tune_ms",
                                                    "maxdiff", "config"), flush=True)

        def row(provider, s, ms, tune_ms, diff, config):
            tflops = 2 * s * s * s * 1e-12 / (ms * 1e-3) if ms > 0 else 0.0
            print("%-13s %6d %10.3f %8.1f %10.1f %10.3g  %s" % (provider, s, ms, tflops, tune_ms,
                                                                diff, config), flush=True)
            w.writerow([provider, s, s, s, "%.4f" % ms, "%.3f" % tflops, config, "%.1f" % tune_ms])
            f.flush()

        for s in sizes:
            a = torch.rand([s, s], device="cuda", dtype=torch.float16)
            b = torch.rand([s, s], device="cuda", dtype=torch.float16)
            c = torch.empty([s, s], device="cuda", dtype=torch.float16)
            ref = torch.matmul(a, b)
            torch.cuda.synchronize()
            for g in groups:
                c.fill_(float("nan"))
                torch.cuda.synchronize()
                t0 = time.perf_counter()
                triton_matmul(a, b, c, g)
                torch.cuda.synchronize()
                tune_ms = (time.perf_counter() - t0) * 1e3
                # Relative to the values (about K / 4): fp16's spacing there, not an error.
                diff = (c.float() - ref.float()).abs().max().item()
                if not diff <= 0.01 * s / 4 + 0.05:
                    print("# triton_gm_%d at %d: MISMATCH against torch.matmul (max abs diff %g)"
                          % (g, s, diff), flush=True)
                    failed = True
                ms = bench(lambda: triton_matmul(a, b, c, g))
                row("triton_gm_%d" % g, s, ms, tune_ms, diff, config_text(tuned_kernel(g).best_config))
            if torch_line:
                torch.cuda.synchronize()
                t0 = time.perf_counter()
                torch.matmul(a, b, out=c)
                torch.cuda.synchronize()
                first_ms = (time.perf_counter() - t0) * 1e3
                ms = bench(lambda: torch.matmul(a, b, out=c))
                row("torch", s, ms, first_ms, 0.0, "torch.matmul")
            del a, b, c, ref
            torch.cuda.empty_cache()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
