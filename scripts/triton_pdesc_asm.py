#!/usr/bin/env python3
# Triton's compiled forms of examples/persistent_desc_matmul.tri (tutorial 09's persistent matmul
# through descriptors, the file tric compiles) at one config, to set beside tric's PTX
# (scripts/bench_persistent_ws_ptx.sh) when tric is slower: writes
# DIR/triton_pdesc_BMxBNxBK_wW_sS_wsX[_sub].{ptx,ttgir} and prints registers, spills and shared
# memory. Run on the GPU machine from the repo root:
#   python3 scripts/triton_pdesc_asm.py DIR BM BN BK WARPS STAGES WS(0|1) SUBTILE(0|1)
import os
import sys
import tempfile

os.environ.setdefault("TRITON_CACHE_DIR", tempfile.mkdtemp(prefix="tcache"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402
import triton  # noqa: E402
from tri_module import load_tri  # noqa: E402

out_dir = sys.argv[1]
BM, BN, BK, W, S, WS, SUB = (int(a) for a in sys.argv[2:9])
triton.set_allocator(lambda size, align, stream: torch.empty(size, device="cuda", dtype=torch.int8))
kern = load_tri("persistent_desc_matmul").matmul_kernel_descriptor_persistent
n = 2048
a = torch.randn(n, n, device="cuda", dtype=torch.float16)
b = torch.randn(n, n, device="cuda", dtype=torch.float16)
c = torch.empty(n, n, device="cuda", dtype=torch.float16)
sms = torch.cuda.get_device_properties(0).multi_processor_count
k = kern[(sms,)](a, b, c, n, n, n, BLOCK_SIZE_M=BM, BLOCK_SIZE_N=BN, BLOCK_SIZE_K=BK, GROUP_SIZE_M=8,
                 NUM_SMS=sms, WARP_SPECIALIZE=bool(WS), EPILOGUE_SUBTILE=bool(SUB), FLATTEN=False,
                 num_warps=W, num_stages=S)
torch.cuda.synchronize()
assert torch.allclose(c.float(), (a.float() @ b.float().T), atol=1e-1, rtol=1e-2)
name = "triton_pdesc_%dx%dx%d_w%d_s%d_ws%s%s" % (BM, BN, BK, W, S, bool(WS), "_sub" if SUB else "")
for key in ("ptx", "ttgir"):
    if key in k.asm:
        with open(os.path.join(out_dir, name + "." + key), "w") as f:
            f.write(k.asm[key])
print("%s: registers %s, spills %s, shared %s" % (name, k.n_regs, k.n_spills, k.metadata.shared))
