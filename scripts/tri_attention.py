# scripts/tri_attention.py: tutorial 06's attention forward (examples/attention.tri attn_fwd)
# launched the two ways the scripts time it: tric's PTX through the CUDA driver (tric_ptx.py) and
# Triton's JIT on the same file, at bench/bench_norms.c's Triton configs. Q, K, V, Out [Z, H,
# N_CTX, HEAD_DIM] fp16, M [Z, H, N_CTX] fp32, grid (N_CTX / BLOCK_M, Z H). Used by
# bench_attention_ptx.py, bench_attention_persistent.py, bench_attention_variants.py,
# attention_report.py and triton_norms.py; elsewhere `python3 -m py_compile` checks it.
import torch
import triton

from tric_ptx import TricPtx

# BLOCK_M, BLOCK_N, num_warps, num_stages (bench_norms.c's attn_configs without tric's
# warp-specialized ones: Triton 3.6 runs this loop as written on Hopper)
TRITON_CONFIGS = [(128, 64, 8, 3), (128, 64, 4, 3), (128, 128, 8, 2), (128, 128, 8, 3), (64, 64, 4, 3)]


def attention_args(q, k, v, sm_scale, with_z=False):
    """attn_fwd's arguments on q, k, v (Z too before H for attention_persistent.tri), and Out."""
    z, h, n, _ = q.shape
    m = torch.empty((z, h, n), device="cuda", dtype=torch.float32)
    o = torch.empty_like(q)
    args = [q, k, v, sm_scale, m, o]
    for t in (q, k, v, o):
        args += [t.stride(0), t.stride(1), t.stride(2)]
    args += ([z] if with_z else []) + [h, n]
    return args, o


def tric_launcher(cuda, path, q, k, v, sm_scale):
    """The tric PTX file's kernel on q, k, v: (a function of no arguments that launches it, Out)."""
    tric = TricPtx(cuda, path)
    bm = int(tric.consts["BLOCK_M"])
    z, h, n, _ = q.shape
    args, o = attention_args(q, k, v, sm_scale)
    return tric.launcher((triton.cdiv(n, bm), z * h), args), o


def triton_attn(mod, q, k, v, o, m, sm_scale, causal, cfg):
    """One launch of mod.attn_fwd (the .tri file under Triton) at cfg, a TRITON_CONFIGS entry."""
    bm, bn, warps, stages = cfg
    z, h, n, d = q.shape
    mod.attn_fwd[(n // bm, z * h, 1)](
        q, k, v, sm_scale, m, o,
        q.stride(0), q.stride(1), q.stride(2), k.stride(0), k.stride(1), k.stride(2),
        v.stride(0), v.stride(1), v.stride(2), o.stride(0), o.stride(1), o.stride(2),
        h, n, HEAD_DIM=d, BLOCK_M=bm, BLOCK_N=bn, STAGE=3 if causal else 1,
        num_stages=stages, num_warps=warps)


def wrong_outputs(runs, ref, unchecked=()):
    """Launches each of runs (name -> (launch, Out)) once over Out filled with NaN and compares Out
    with ref: [(name, max |difference|)] of those off by more than 2e-2 (names in unchecked are
    launched but not judged: timing-only edits known to be wrong)."""
    wrong = []
    for name, (run, o) in runs.items():
        o.fill_(float("nan"))
        run()
        torch.cuda.synchronize()
        diff = (o.float() - ref.float()).abs().max().item()
        if not diff <= 2e-2 and name not in unchecked:
            wrong.append((name, diff))
    return wrong

