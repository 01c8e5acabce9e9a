#!/usr/bin/env python3
# Triton's compiled forms of examples/attention.tri (the same file tric compiles) for one config,
# to set beside tric's PTX when attention is slower: writes DIR/triton_attn_<cfg>.{ptx,ttgir,sass?}
# and prints registers and spills. Run on the GPU machine from the repo root:
#   python3 scripts/triton_attn_asm.py DIR HEAD_DIM BLOCK_M BLOCK_N WARPS STAGES CAUSAL(0|1)
import importlib.machinery
import importlib.util
import os
import sys
import tempfile

os.environ.setdefault("TRITON_CACHE_DIR", tempfile.mkdtemp(prefix="tcache"))
import torch

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
out_dir = sys.argv[1]
D, BM, BN, W, S, causal = (int(a) for a in sys.argv[2:8])
path = os.path.join(ROOT, "examples", "attention.tri")
loader = importlib.machinery.SourceFileLoader("tri_attention", path)
spec = importlib.util.spec_from_loader(loader.name, loader)
mod = importlib.util.module_from_spec(spec)
mod.__file__ = path
sys.modules[loader.name] = mod
loader.exec_module(mod)
Z, H, N = 1, 2, 1024
q, k, v = (torch.randn(Z, H, N, D, device="cuda", dtype=torch.float16) for _ in range(3))
o, m = torch.empty_like(q), torch.empty(Z * H, N, device="cuda", dtype=torch.float32)
kern = mod.attn_fwd[(N // BM, Z * H, 1)](
    q, k, v, 0.5, m, o, q.stride(0), q.stride(1), q.stride(2), k.stride(0), k.stride(1), k.stride(2),
    v.stride(0), v.stride(1), v.stride(2), o.stride(0), o.stride(1), o.stride(2), H, N,
    HEAD_DIM=D, BLOCK_M=BM, BLOCK_N=BN, STAGE=3 if causal else 1, num_stages=S, num_warps=W)
torch.cuda.synchronize()
name = "triton_attn_d%d_%dx%d_w%d_s%d_%s" % (D, BM, BN, W, S, "causal" if causal else "full")
for key in ("ptx", "ttgir"):
    if key in kern.asm:
        with open(os.path.join(out_dir, name + "." + key), "w") as f:
            f.write(kern.asm[key])
print("%s: registers %s, spills %s, shared %s" % (name, kern.n_regs, kern.n_spills, kern.metadata.shared))
