#!/usr/bin/env python3
# Triton's side of issue 10's tutorial bars: the SAME kernel files tric compiles
# (examples/softmax.tri, layer_norm.tri, attention.tri: Python modules under another suffix) loaded
# with importlib and timed with triton.testing.do_bench (median, its L2 flush), at the shapes and
# launch parameters of bench/bench_norms.c, plus torch's references (torch.softmax,
# F.layer_norm, F.scaled_dot_product_attention) for context. Every Triton kernel is first checked
# against torch.
# Run on the GPU machine from the repo root:
#   python3 scripts/triton_norms.py [--quick] [--only=softmax,layer_norm,attention] [--csv=FILE]
#       [--all] [--no-torch]
# Rows and CSV columns as bench_norms's (provider triton or torch); scripts/norms_report.sh
# merges the two.
import math
import os
import sys
import tempfile
import time

os.environ.setdefault("TRITON_CACHE_DIR", tempfile.mkdtemp(prefix="tcache"))
import torch
import torch.nn.functional as F
import triton

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tri_module import load_tri  # noqa: E402
from tri_attention import TRITON_CONFIGS as ATTN_CONFIGS, triton_attn  # noqa: E402

args = sys.argv[1:]
QUICK = "--quick" in args
ALL = "--all" in args
TORCH = "--no-torch" not in args
ONLY = next((a.split("=", 1)[1] for a in args if a.startswith("--only=")), "softmax,layer_norm,attention")
CSV = next((a.split("=", 1)[1] for a in args if a.startswith("--csv=")), None)
REST_S = float(os.environ.get("TRIC_BENCH_REST_MS", "0") or 0) / 1000.0

dev = torch.device("cuda")
props = torch.cuda.get_device_properties(0)
NUM_SM = props.multi_processor_count
print("# device: %s, triton %s, torch %s" % (props.name, triton.__version__, torch.__version__), flush=True)
csv = open(CSV, "w") if CSV else None
if csv:
    csv.write("provider,bench,dtype,M,N,head,causal,config,time_us,value,unit,row\n")
failed = False


def bench(fn):
    if REST_S > 0:
        torch.cuda.synchronize()
        time.sleep(REST_S)
    return triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median")


def report(provider, bench_name, dtype, M, N, head, causal, config, ms, value, unit, row="best"):
    shape = "ZH=%d N=%d D=%d %s" % (M, N, head, "causal" if causal else "full") if head else "%dx%d" % (M, N)
    print("%s%-8s %-11s %-5s %-26s %-14s %10.1f %8.1f %s" % ("" if row == "best" else "#   ", provider,
          bench_name, dtype, shape, config, ms * 1000, value, unit), flush=True)
    if csv:
        csv.write('%s,%s,%s,%d,%d,%d,%d,"%s",%.3f,%.3f,%s,%s\n' % (provider, bench_name, dtype, M, N, head,
                  int(causal), config, ms * 1000, value, unit, row))
        csv.flush()


def check(name, got, want, atol, rtol):
    global failed
    if not torch.allclose(got.float(), want.float(), atol=atol, rtol=rtol):
        err = (got.float() - want.float()).abs().max().item()
        print("# WARNING: %s: Triton's result differs from torch's (max abs err %.3g)" % (name, err), flush=True)
        failed = True


DTYPES = {"fp32": torch.float32, "fp16": torch.float16}
ROWS = 4096
COLS = [8192] if QUICK else [2048, 8192, 32768]
print("%-12s %-11s %-5s %-26s %-14s %10s %8s" % ("# provider", "kernel", "dtype", "shape", "config", "time_us",
                                                   "value"), flush=True)

# ---- softmax (tutorial 02's launch: 8 warps, num_stages 4 when the SM has > 200 KB of shared
# memory, a persistent grid of NUM_SM x occupancy programs from the kernel's registers and
# shared memory) ----
if "softmax" in ONLY:
    sm_mod = load_tri("softmax")
    smem_per_sm = getattr(props, "shared_memory_per_multiprocessor", 228 * 1024)
    regs_per_sm = getattr(props, "regs_per_multiprocessor", 65536)
    for dname, dt in DTYPES.items():
        for n_cols in COLS:
            x = torch.randn(ROWS, n_cols, device=dev, dtype=dt)
            y = torch.empty_like(x)
            block = triton.next_power_of_2(n_cols)
            warps, stages = 8, 4 if smem_per_sm > 200000 else 2
            try:  # the tutorial's occupancy estimate from the compiled kernel
                kern = sm_mod.softmax_kernel.warmup(y, x, x.stride(0), y.stride(0), ROWS, n_cols,
                                                    BLOCK_SIZE=block, num_stages=stages, num_warps=warps,
                                                    grid=(1,))
                kern._init_handles()
                occupancy = regs_per_sm // max(1, kern.n_regs * 32 * warps)
                if kern.metadata.shared:
                    occupancy = min(occupancy, smem_per_sm // kern.metadata.shared)
            except Exception as e:
                print("# softmax: no occupancy estimate (%s): 2 programs per SM" % str(e).splitlines()[0][:120])
                occupancy = 2
            programs = min(NUM_SM * max(1, occupancy), ROWS)

            # Launched through the JIT (not the compiled kernel's launcher, whose argument list
            # changed between Triton versions); do_bench's L2 flush hides its launch overhead.
            def run(x=x, y=y, programs=programs, n_cols=n_cols, block=block, stages=stages, warps=warps):
                sm_mod.softmax_kernel[(programs, 1, 1)](y, x, x.stride(0), y.stride(0), ROWS, n_cols,
                                                        BLOCK_SIZE=block, num_stages=stages, num_warps=warps)

            try:
                run()
            except Exception as e:  # Triton cannot build this row (e.g. out of shared memory)
                print("# softmax %s %dx%d: skipped: %s" % (dname, ROWS, n_cols, str(e).splitlines()[0][:160]),
                      flush=True)
                continue
            check("softmax %s %dx%d" % (dname, ROWS, n_cols), y, torch.softmax(x.float(), dim=1),
                  1e-5 if dt == torch.float16 else 1e-8, 2e-3 if dt == torch.float16 else 1e-5)
            gb = 2 * x.numel() * x.element_size() * 1e-9
            ms = bench(run)
            report("triton", "softmax", dname, ROWS, n_cols, 0, 0, "grid=%d,w%d" % (programs, warps), ms,
                   gb / (ms * 1e-3), "GB/s")
            if TORCH:
                ms = bench(lambda: torch.softmax(x, dim=1))
                report("torch", "softmax", dname, ROWS, n_cols, 0, 0, "torch.softmax", ms, gb / (ms * 1e-3), "GB/s")
            del x, y

# ---- layer norm forward (tutorial 05's launch) ----
if "layer_norm" in ONLY:
    ln_mod = load_tri("layer_norm")
    for dname, dt in DTYPES.items():
        for n_cols in COLS:
            x = -2.3 + 0.5 * torch.randn(ROWS, n_cols, device=dev, dtype=dt)
            w = torch.rand(n_cols, device=dev, dtype=dt)
            b = torch.rand(n_cols, device=dev, dtype=dt)
            y = torch.empty_like(x)
            mean = torch.empty(ROWS, device=dev, dtype=torch.float32)
            rstd = torch.empty(ROWS, device=dev, dtype=torch.float32)
            max_fused = 65536 // x.element_size()
            block = min(max_fused, triton.next_power_of_2(n_cols))
            warps = min(max(block // 256, 1), 8)

            def run(x=x, w=w, b=b, y=y, mean=mean, rstd=rstd, block=block, warps=warps, n_cols=n_cols):
                ln_mod.layer_norm_fwd[(ROWS,)](x, y, w, b, mean, rstd, x.stride(0), n_cols, 1e-5,
                                               BLOCK_SIZE=block, num_warps=warps)

            run()
            check("layer_norm %s %dx%d" % (dname, ROWS, n_cols), y,
                  F.layer_norm(x.float(), (n_cols,), w.float(), b.float(), 1e-5),
                  4e-3 if dt == torch.float16 else 2e-5, 2e-3 if dt == torch.float16 else 1e-5)
            gb = 2 * x.numel() * x.element_size() * 1e-9
            ms = bench(run)
            report("triton", "layer_norm", dname, ROWS, n_cols, 0, 0, "grid=%d,w%d" % (ROWS, warps), ms,
                   gb / (ms * 1e-3), "GB/s")
            if TORCH:
                ms = bench(lambda: F.layer_norm(x, (n_cols,), w, b, 1e-5))
                report("torch", "layer_norm", dname, ROWS, n_cols, 0, 0, "F.layer_norm", ms, gb / (ms * 1e-3),
                       "GB/s")
            del x, y

# ---- fused attention forward (tutorial 06; configs as bench_norms.c's attn_configs) ----
if "attention" in ONLY:
    at_mod = load_tri("attention")
    sm_scale = 0.5

    def attn(q, k, v, o, m, causal, cfg):
        triton_attn(at_mod, q, k, v, o, m, sm_scale, causal, cfg)

    def tensors(Z, H, N, D):
        q, k, v = (torch.randn(Z, H, N, D, device=dev, dtype=torch.float16) for _ in range(3))
        return q, k, v, torch.empty_like(q), torch.empty(Z * H, N, device=dev, dtype=torch.float32)

    contexts = [1024, 4096] if QUICK else [1024, 4096, 16384]
    for D in (64, 128):
        for causal in (False, True):
            usable = []
            for cfg in ATTN_CONFIGS:
                if cfg[1] > D:
                    continue
                q, k, v, o, m = tensors(1, 2, 256, D)
                try:
                    attn(q, k, v, o, m, causal, cfg)
                    torch.cuda.synchronize()
                except Exception as e:  # out of shared memory or registers: skip the config
                    print("# attention D=%d %s: skipped: %s" % (D, cfg, str(e).splitlines()[0][:160]), flush=True)
                    continue
                ref = F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=sm_scale)
                check("attention D=%d causal=%d %s" % (D, causal, cfg), o, ref, 1e-2, 1e-2)
                usable.append(cfg)
            for N in contexts:
                Z, H = (1, 8) if N >= 16384 else (4, 8)
                q, k, v, o, m = tensors(Z, H, N, D)
                flops = 4.0 * Z * H * N * N * D * (0.5 if causal else 1.0)
                best, best_cfg = 0.0, "-"
                for cfg in usable:
                    ms = bench(lambda: attn(q, k, v, o, m, causal, cfg))
                    name = "%dx%d,w%d,s%d" % cfg
                    if ALL:
                        report("triton", "attention", "fp16", Z * H, N, D, causal, name, ms,
                               flops / (ms * 1e-3) / 1e12, "TFLOPS", "config")
                    if best == 0 or ms < best:
                        best, best_cfg = ms, name
                report("triton", "attention", "fp16", Z * H, N, D, causal, best_cfg, best,
                       flops / (best * 1e-3) / 1e12 if best else 0, "TFLOPS")
                if TORCH:
                    ms = bench(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=sm_scale))
                    report("torch", "attention", "fp16", Z * H, N, D, causal, "sdpa", ms,
                           flops / (ms * 1e-3) / 1e12, "TFLOPS")
                del q, k, v, o, m

if csv:
    csv.close()
sys.exit(1 if failed else 0)
