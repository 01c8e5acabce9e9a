#!/usr/bin/env python3
# scripts/bench_attention_persistent.py DIR [OLD_DIR]: tutorial 06's forward (not causal, D = 128)
# as tric compiled it as a grid (DIR/grid.ptx: examples/attention.tri, the pass's chosen producer)
# and as the persistent kernel of examples/attention_persistent.tri
# (DIR/persistent_ws{False,True}.ptx: scripts/bench_attention_persistent_ptx.sh), and the grid made
# persistent by tric (DIR/grid_persistent.ptx: --persistent, launched as the grid), beside torch's
# scaled_dot_product_attention, in this one process: every output checked against SDPA's first,
# then do_bench medians (L2 flushed), three rounds in alternating order; TFLOPS = 4 Z H N^2 D / t.
# With OLD_DIR (the same files from another build), its kernels too, as old_*: a change's effect.
import ctypes
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402
from tri_attention import attention_args, tric_launcher, wrong_outputs  # noqa: E402
from tric_ptx import TricPtx, median_times  # noqa: E402

SHAPES = ((4, 8, 1024), (4, 32, 1024), (4, 8, 4096))


def persistent_launcher(cuda, path, q, k, v, sm_scale):
    t = TricPtx(cuda, path)
    z, h, n, _ = q.shape
    args, o = attention_args(q, k, v, sm_scale, with_z=True)
    tiles = n // int(t.consts["BLOCK_M"]) * z * h
    return t.launcher((min(int(t.consts["NUM_SMS"]), tiles),), args), o


def main(argv):
    if len(argv) < 2:
        sys.exit("usage: bench_attention_persistent.py DIR [OLD_DIR]")
    dirs = [("", argv[1])] + ([("old_", argv[2])] if len(argv) > 2 else [])
    torch.empty(1, device="cuda")
    cuda = ctypes.CDLL("libcuda.so.1")
    for z, h, n in SHAPES:
        torch.manual_seed(6)
        q, k, v = (torch.randn((z, h, n, 128), device="cuda", dtype=torch.float16) * 0.5
                   for _ in range(3))
        sc = 1.0 / 128 ** 0.5
        runs = {}
        for prefix, d in dirs:
            runs[prefix + "grid"] = tric_launcher(cuda, os.path.join(d, "grid.ptx"), q, k, v, sc)
            gp = os.path.join(d, "grid_persistent.ptx")
            if os.path.exists(gp):
                runs[prefix + "grid_persistent"] = tric_launcher(cuda, gp, q, k, v, sc)
            for ws in ("False", "True"):
                runs[prefix + "persistent_ws" + ws] = persistent_launcher(
                    cuda, os.path.join(d, "persistent_ws%s.ptx" % ws), q, k, v, sc)
        ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, scale=sc)
        for name, diff in wrong_outputs(runs, ref):
            sys.exit("%s Z=%d H=%d N=%d: wrong, max |difference| from SDPA %g" % (
                name, z, h, n, diff))
        launches = {name: run for name, (run, _) in runs.items()}
        launches["sdpa"] = lambda: torch.nn.functional.scaled_dot_product_attention(
            q, k, v, scale=sc)
        ms = median_times(list(launches.items()), 3)
        flops = 4 * z * h * n * n * 128
        tf = {name: flops / t / 1e9 for name, t in ms.items()}
        print("Z=%d H=%d N_CTX=%d: " % (z, h, n) +
              "  ".join("%s %.1f" % (name, x) for name, x in tf.items()) +
              "  | persistent_wsTrue / grid %.3f, / sdpa %.3f" % (
                  tf["persistent_wsTrue"] / tf["grid"], tf["persistent_wsTrue"] / tf["sdpa"]) +
              ("  | grid_persistent / grid %.3f, / sdpa %.3f" % (
                  tf["grid_persistent"] / tf["grid"], tf["grid_persistent"] / tf["sdpa"])
               if "grid_persistent" in tf else "") +
              "".join("  | %s new / old %.3f" % (name, tf[name] / tf["old_" + name])
                      for name in ("grid", "persistent_wsFalse", "persistent_wsTrue",
                                   "grid_persistent")
                      if "old_" + name in tf),
              flush=True)


if __name__ == "__main__":
    main(sys.argv)
