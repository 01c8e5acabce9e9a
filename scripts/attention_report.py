#!/usr/bin/env python3
# scripts/attention_report.py PTX_DIR [--quick] [--rounds=N] [--md=FILE] [--only-d=64|128]
#     [--causal-only] [--all] [--heads=H]
# Tutorial 06's attention forward (examples/attention.tri attn_fwd), issue 22's bar: tric against
# torch's scaled_dot_product_attention and Triton 3.6 in ONE process, every candidate timed by
# triton.testing.do_bench (median, its L2 flush) in rounds whose order alternates, so that the
# GPU's clock and temperature weigh on every side alike (scripts/norms_report.sh times tric and
# Triton + torch in two processes, one after the other: its tric / torch ratio moves with the
# GPU's state between them).
#   PTX_DIR: scripts/ptx_corpus.sh's output; its attention_d{D}_s{1,3}_*.ptx files are tric's
#   configs (s1: not causal, s3: causal). Triton runs the same .tri file at bench_norms's
#   configs as written (its warp_specialize False). Shapes as bench/bench_norms.c: fp16, Z x H = 4
#   x 8 (N_CTX 16384: 1 x 8; --heads=H: H heads instead of 8), sm_scale 0.5, randn data. Every
#   output is checked against torch's first (max |difference| <= 2e-2); a candidate that fails is
#   reported and not timed.
# Prints, per shape, each provider's best config and TFLOPS and tric / torch, tric / Triton
# (throughput ratios: > 1 is tric faster); --all: every candidate's time first; --md: the table as
# markdown. --quick: N_CTX 1024 and 4096 only. Run on the GPU machine from the repo root.
import ctypes
import glob
import os
import statistics
import sys
import tempfile

os.environ.setdefault("TRITON_CACHE_DIR", tempfile.mkdtemp(prefix="tcache"))
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
import triton  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tri_module import load_tri  # noqa: E402
from tri_attention import TRITON_CONFIGS, tric_launcher, triton_attn  # noqa: E402

SM_SCALE = 0.5


def tric_candidates(cuda, ptx_dir, d, causal, q, k, v):
    out = []
    for path in sorted(glob.glob(os.path.join(ptx_dir, "attention_d%d_s%d_*.ptx" % (d, 3 if causal else 1)))):
        run, o = tric_launcher(cuda, path, q, k, v, SM_SCALE)
        name = os.path.basename(path)[len("attention_d%d_s1_" % d):-len(".ptx")]
        out.append(("tric", name, run, o))
    return out


def triton_candidates(mod, d, causal, q, k, v):
    out = []
    z, h, n, _ = q.shape
    for cfg in TRITON_CONFIGS:
        if cfg[1] > d:
            continue
        m = torch.empty((z * h, n), device="cuda", dtype=torch.float32)
        o = torch.empty_like(q)

        def run(cfg=cfg, o=o, m=m):
            triton_attn(mod, q, k, v, o, m, SM_SCALE, causal, cfg)
        out.append(("triton", "%dx%d_w%d_s%d" % cfg, run, o))
    return out


def main(argv):
    if len(argv) < 2 or argv[1].startswith("-"):
        sys.exit("usage: attention_report.py PTX_DIR [--quick] [--rounds=N] [--md=FILE] "
                 "[--only-d=D] [--causal-only] [--all] [--heads=H]")
    ptx_dir = argv[1]
    opts = dict(a[2:].split("=", 1) if "=" in a else (a[2:], "1") for a in argv[2:])
    rounds = int(opts.get("rounds", 3))
    contexts = [1024, 4096] if "quick" in opts else [1024, 4096, 16384]
    heads = [int(opts["only-d"])] if "only-d" in opts else [64, 128]
    torch.cuda.init()
    torch.empty(1, device="cuda")
    cuda = ctypes.CDLL("libcuda.so.1")
    mod = load_tri("attention")
    props = torch.cuda.get_device_properties(0)
    print("# %s, triton %s, torch %s, %d rounds" % (props.name, triton.__version__, torch.__version__, rounds))
    rows = []
    failed = False
    for d in heads:
        for causal in ((True,) if "causal-only" in opts else (False, True)):
            for n in contexts:
                z, h = (1 if n >= 16384 else 4), int(opts.get("heads", 8))
                torch.manual_seed(9)
                q, k, v = (torch.randn((z, h, n, d), device="cuda", dtype=torch.float16) for _ in range(3))
                ref = F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=SM_SCALE)
                cands = tric_candidates(cuda, ptx_dir, d, causal, q, k, v) + triton_candidates(mod, d, causal, q, k, v)
                usable = []
                for side, name, run, o in cands:
                    o.zero_()
                    try:
                        run()
                        torch.cuda.synchronize()
                    except Exception as e:  # Triton: out of shared memory or registers
                        print("# D=%d causal=%d N=%d %s %s: skipped: %s" % (d, causal, n, side, name,
                                                                          str(e).splitlines()[0][:120]))
                        continue
                    diff = (o.float() - ref.float()).abs().max().item()
                    if not diff <= 2e-2:
                        print("# D=%d causal=%d N=%d %s %s: WRONG, max |difference| from torch %.3g" % (
                            d, causal, n, side, name, diff))
                        failed = True
                        continue
                    usable.append((side, name, run))
                usable.append(("torch", "sdpa", lambda: F.scaled_dot_product_attention(
                    q, k, v, is_causal=causal, scale=SM_SCALE)))
                times = {(s, nm): [] for s, nm, _ in usable}
                for r in range(rounds):
                    for s, nm, run in (usable if r % 2 == 0 else usable[::-1]):
                        times[(s, nm)].append(triton.testing.do_bench(run, warmup=25, rep=100,
                                                                      return_mode="median"))
                flops = 4.0 * z * h * n * n * d * (0.5 if causal else 1.0)
                best = {}
                for (s, nm), ts in times.items():
                    ms = statistics.median(ts)
                    if "all" in opts:
                        print("#   D=%d causal=%d N=%d %-6s %-22s %.4f ms %6.1f TFLOPS" % (
                            d, causal, n, s, nm, ms, flops / ms * 1e-9))
                    if s not in best or ms < best[s][1]:
                        best[s] = (nm, ms)
                tf = {s: flops / best[s][1] * 1e-9 for s in best}
                row = (d, causal, n, best.get("tric", ("-", 0))[0], tf.get("tric", 0),
                       best.get("triton", ("-", 0))[0], tf.get("triton", 0), tf["torch"])
                rows.append(row)
                print("D=%3d causal=%d N=%5d  tric %-20s %6.1f  triton %-14s %6.1f  sdpa %6.1f  "
                      "tric/sdpa %.3f  tric/triton %.3f" % (row + (row[4] / row[7], row[4] / max(row[6], 1e-9))),
                      flush=True)
    if "md" in opts:
        with open(opts["md"], "w") as md:
            md.write("| D | causal | N_CTX | tric config | tric | Triton config | Triton | SDPA | tric / SDPA | tric / Triton |\n")
            md.write("| ---: | --- | ---: | --- | ---: | --- | ---: | ---: | ---: | ---: |\n")
            for r in rows:
                md.write("| %d | %s | %d | %s | %.1f | %s | %.1f | %.1f | %.2f | %.2f |\n" % (
                    r[0], "yes" if r[1] else "no", r[2], r[3], r[4], r[5], r[6], r[7], r[4] / r[7],
                    r[4] / max(r[6], 1e-9)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
