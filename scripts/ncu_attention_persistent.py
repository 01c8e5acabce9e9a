#!/usr/bin/env python3
# scripts/ncu_attention_persistent.py DIR [Z,H,N_CTX]: one launch each of tutorial 06's forward as
# tric compiled it as a grid (DIR/grid.ptx) and as the warp-specialized persistent kernel
# (DIR/persistent_wsTrue.ptx; scripts/bench_attention_persistent_ptx.sh makes both), then torch's
# scaled_dot_product_attention, D = 128, fp16 (default 4,8,1024): for ncu, e.g.
#   ncu --clock-control none --section SourceCounters --section WarpStateStats \
#       -k regex:"attn|sdpa|flash" -o REPORT python3 scripts/ncu_attention_persistent.py DIR
#   ncu -i REPORT.ncu-rep --page source --csv --print-source sass > sass.csv
import ctypes
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402
from tri_attention import attention_args, tric_launcher  # noqa: E402
from tric_ptx import TricPtx  # noqa: E402


def main(argv):
    if len(argv) < 2:
        sys.exit("usage: ncu_attention_persistent.py DIR [Z,H,N_CTX]")
    z, h, n = (int(x) for x in (argv[2] if len(argv) > 2 else "4,8,1024").split(","))
    torch.empty(1, device="cuda")
    cuda = ctypes.CDLL("libcuda.so.1")
    torch.manual_seed(6)
    q, k, v = (torch.randn((z, h, n, 128), device="cuda", dtype=torch.float16) * 0.5
               for _ in range(3))
    sc = 1.0 / 128 ** 0.5
    grid, _ = tric_launcher(cuda, os.path.join(argv[1], "grid.ptx"), q, k, v, sc)
    t = TricPtx(cuda, os.path.join(argv[1], "persistent_wsTrue.ptx"))
    args, _ = attention_args(q, k, v, sc, with_z=True)
    tiles = n // int(t.consts["BLOCK_M"]) * z * h
    persistent = t.launcher((min(int(t.consts["NUM_SMS"]), tiles),), args)
    for run in (grid, persistent,
                lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v, scale=sc)):
        run()
        torch.cuda.synchronize()


if __name__ == "__main__":
    main(sys.argv)
