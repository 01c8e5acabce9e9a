#!/usr/bin/env python3
# scripts/bench_attention_ptx.py OLD_DIR NEW_DIR [N_CTX] : tutorial 06's attention forward
# (examples/attention.tri attn_fwd) as two tric builds compiled it, every attention_d*.ptx that
# scripts/ptx_corpus.sh writes (_s1_: STAGE 1, not causal; _s3_: STAGE 3, causal) in both
# folders, timed in this one
# process by triton.testing.do_bench (median), three rounds, the order alternating: for a change
# that moves the generated code of a kernel whose figures docs/performance.md tracks. Outputs
# are compared first (old against new, and new against torch's scaled_dot_product_attention).
# Prints per file: the old and new ms and new / old time.
import ctypes
import glob
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402
import triton  # noqa: E402
from tri_attention import tric_launcher  # noqa: E402


def main(argv):
    if len(argv) < 3:
        sys.exit("usage: bench_attention_ptx.py OLD_DIR NEW_DIR [N_CTX]")
    n_ctx = int(argv[3]) if len(argv) > 3 else 4096
    torch.cuda.init()
    torch.empty(1, device="cuda")
    cuda = ctypes.CDLL("libcuda.so.1")
    for new in sorted(glob.glob(os.path.join(argv[2], "attention_d*.ptx"))):
        old = os.path.join(argv[1], os.path.basename(new))
        d = int(os.path.basename(new).split("_")[1][1:])
        causal = os.path.basename(new).split("_")[2] == "s3"
        torch.manual_seed(6)
        q, k, v = (torch.randn((4, 32, n_ctx, d), device="cuda", dtype=torch.float16) * 0.5
                   for _ in range(3))
        run_old, o_old = tric_launcher(cuda, old, q, k, v, 1.0 / d ** 0.5)
        run_new, o_new = tric_launcher(cuda, new, q, k, v, 1.0 / d ** 0.5)
        run_old()
        run_new()
        torch.cuda.synchronize()
        ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
        diff = (o_new.float() - ref.float()).abs().max().item()
        same = torch.equal(o_old, o_new)
        diff_old = (o_old.float() - ref.float()).abs().max().item()
        if diff > 2e-2 or diff_old > 2e-2:
            print("%s: wrong, max |difference| from torch: new %.3g, old %.3g" % (
                new, diff, diff_old), flush=True)
            continue
        times = {"old": [], "new": []}
        sides = [("old", run_old), ("new", run_new)]
        for rnd in range(3):
            for name, run in (sides if rnd % 2 == 0 else sides[::-1]):
                times[name].append(triton.testing.do_bench(run, warmup=25, rep=50,
                                                           return_mode="median"))
        t_old, t_new = statistics.median(times["old"]), statistics.median(times["new"])
        print("%-40s old %.4f ms  new %.4f ms  new/old time %.3f  (%s, vs torch %.2g)" % (
            os.path.basename(new), t_old, t_new, t_new / t_old,
            "outputs identical" if same else "outputs differ", diff), flush=True)


if __name__ == "__main__":
    main(sys.argv)
