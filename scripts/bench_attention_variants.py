#!/usr/bin/env python3
# scripts/bench_attention_variants.py PTX...: tutorial 06's forward (examples/attention.tri
# attn_fwd; HEAD_DIM (default 128) and CAUSAL (default 0) from the environment, as the PTX files
# were compiled), each PTX file launched as the grid (tri_attention.tric_launcher:
# a grid tric made persistent launches the same way), beside torch's
# scaled_dot_product_attention, in this one process: for hand-edited variants of one kernel
# (docs/performance.md "FlashAttention-3's two overlaps on tric's attention"). Every output is
# checked against SDPA first (max |difference| <= 2e-2) and a wrong one is reported and not timed,
# except a file whose name holds "nocheck" (a timing-only edit whose results are known wrong).
# Then ROUNDS rounds (default 5) of triton.testing.do_bench medians (L2 flushed) in alternating
# order; prints TFLOPS = 4 Z H N^2 D / t (half that when causal) and each one over SDPA's. SHAPES: comma-separated
# ZxHxN_CTX (default 4x32x1024,4x8x4096,2x16x16384). Run on the GPU machine.
import ctypes
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402
from tri_attention import tric_launcher, wrong_outputs  # noqa: E402
from tric_ptx import median_times  # noqa: E402

HEAD_DIM = int(os.environ.get("HEAD_DIM", "128"))
CAUSAL = os.environ.get("CAUSAL", "0") == "1"


def main(argv):
    if len(argv) < 2:
        sys.exit("usage: bench_attention_variants.py PTX...")
    shapes = [tuple(int(x) for x in s.split("x"))
              for s in os.environ.get("SHAPES", "4x32x1024,4x8x4096,2x16x16384").split(",")]
    rounds = int(os.environ.get("ROUNDS", "5"))
    cuda = ctypes.CDLL("libcuda.so.1")
    torch.empty(1, device="cuda")
    for z, h, n in shapes:
        torch.manual_seed(6)
        q, k, v = (torch.randn((z, h, n, HEAD_DIM), device="cuda", dtype=torch.float16) * 0.5
                   for _ in range(3))
        sc = 1.0 / HEAD_DIM ** 0.5
        ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, scale=sc,
                                                               is_causal=CAUSAL)
        runs = {os.path.basename(path)[:-len(".ptx")]: tric_launcher(cuda, path, q, k, v, sc)
                for path in argv[1:]}
        wrong = wrong_outputs(runs, ref, [name for name in runs if "nocheck" in name])
        for name, diff in wrong:
            print("%dx%dx%d %s: wrong, max |difference| from SDPA %g" % (z, h, n, name, diff),
                  flush=True)
            del runs[name]
        launches = {name: run for name, (run, _) in runs.items()}
        launches["sdpa"] = lambda: torch.nn.functional.scaled_dot_product_attention(
            q, k, v, scale=sc, is_causal=CAUSAL)
        names = list(launches)
        ms = median_times(list(launches.items()), rounds)
        flops = 4 * z * h * n * n * HEAD_DIM / (2 if CAUSAL else 1)
        tf = {name: flops / t / 1e9 for name, t in ms.items()}
        print("%dx%dx%d sdpa %.0f | " % (z, h, n, tf["sdpa"]) +
              "  ".join("%s %.0f (%.3f)" % (name, tf[name], tf[name] / tf["sdpa"])
                        for name in names if name != "sdpa"), flush=True)


if __name__ == "__main__":
    main(sys.argv)
