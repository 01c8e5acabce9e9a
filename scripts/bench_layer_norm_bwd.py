#!/usr/bin/env python3
# scripts/bench_layer_norm_bwd.py PTXDIR [--check] [--m=M]: Triton's tutorial 05 layer norm
# backward (examples/layer_norm_bwd.tri) as tric compiled it (scripts/bench_layer_norm_bwd_ptx.sh:
# OUTDIR/ln_bwd_dx_N.ptx at the tutorial's launch choices, OUTDIR/ln_bwd_dwdb.ptx) beside Triton
# running the very same file at the same choices and torch's layer_norm backward (autograd), in
# this one process: M rows (4096, the tutorial's) of N fp16, the two launches of the tutorial's
# backward (dx with the partial dw / db under locks, then their sum) timed together with the
# locks' zeroing, by triton.testing.do_bench (medians of three rounds, the order alternating;
# tric's PTX launched through the driver API on torch's stream: tric_ptx.py). Correct first: dx,
# dw and db of each side against torch's. --check: one run each, no timing.
import ctypes
import glob
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402
import triton  # noqa: E402
from tri_module import load_tri  # noqa: E402
from tric_ptx import TricPtx, median_times  # noqa: E402

ROUNDS = 3


def main(argv):
    if len(argv) < 2:
        sys.exit("usage: bench_layer_norm_bwd.py PTXDIR [--check] [--m=M]")
    ptxdir, check_only = argv[1], "--check" in argv[2:]
    m = next((int(a.split("=", 1)[1]) for a in argv[2:] if a.startswith("--m=")), 4096)
    torch.cuda.init()
    torch.empty(1, device="cuda")  # the primary context, current for the driver API
    cuda = ctypes.CDLL("libcuda.so.1")
    mod = load_tri("layer_norm_bwd")
    print("# triton %s, torch %s, %s, M = %d" % (triton.__version__, torch.__version__,
                                                torch.cuda.get_device_name(), m), flush=True)
    dwdb = TricPtx(cuda, os.path.join(ptxdir, "ln_bwd_dwdb.ptx"))
    bm, bn = int(dwdb.consts["BLOCK_SIZE_M"]), int(dwdb.consts["BLOCK_SIZE_N"])
    paths = glob.glob(os.path.join(ptxdir, "ln_bwd_dx_*.ptx"))
    for path in sorted(paths, key=lambda p: int(re.search(r"_(\d+)\.ptx$", p).group(1))):
        n = int(re.search(r"_(\d+)\.ptx$", path).group(1))
        dx_k = TricPtx(cuda, path)
        group, block = int(dx_k.consts["GROUP_SIZE_M"]), int(dx_k.consts["BLOCK_SIZE_N"])
        warps = int(dx_k.head["num_warps"])
        torch.manual_seed(5)
        x = (-2.3 + 0.5 * torch.randn(m, n, device="cuda")).half().requires_grad_(True)
        w = torch.rand(n, device="cuda").half().requires_grad_(True)
        b = torch.rand(n, device="cuda").half().requires_grad_(True)
        dy = 0.1 * torch.randn(m, n, device="cuda").half()
        y = torch.nn.functional.layer_norm(x, (n,), w, b, 1e-5)
        y.backward(dy, retain_graph=True)
        ref = (x.grad.float(), w.grad.float(), b.grad.float())
        xf = x.detach().float()
        mean = xf.mean(dim=1).contiguous()
        rstd = (1.0 / torch.sqrt(xf.var(dim=1, unbiased=False) + 1e-5)).contiguous()
        xd, wd = x.detach(), w.detach()

        def buffers():
            return dict(locks=torch.zeros(2 * group, device="cuda", dtype=torch.int32),
                        pdw=torch.zeros(group, n, device="cuda", dtype=torch.float16),
                        pdb=torch.zeros(group, n, device="cuda", dtype=torch.float16),
                        dx=torch.full_like(xd, float("nan")),
                        dw=torch.full((n,), float("nan"), device="cuda", dtype=torch.float16),
                        db=torch.full((n,), float("nan"), device="cuda", dtype=torch.float16))

        t_buf, p_buf = buffers(), buffers()
        dx_run = dx_k.launcher((m,), [t_buf["dx"], dy, t_buf["pdw"], t_buf["pdb"], xd, wd, mean,
                                      rstd, t_buf["locks"], xd.stride(0), n])
        sum_run = dwdb.launcher((triton.cdiv(n, bn),), [t_buf["pdw"], t_buf["pdb"], t_buf["dw"],
                                                       t_buf["db"], min(group, m), n])

        def tric_run():
            t_buf["locks"].zero_()
            dx_run()
            sum_run()

        def triton_run():
            p = p_buf
            p["locks"].zero_()
            mod._layer_norm_bwd_dx_fused[(m,)](p["dx"], dy, p["pdw"], p["pdb"], xd, wd, mean,
                                               rstd, p["locks"], xd.stride(0), n,
                                               GROUP_SIZE_M=group, BLOCK_SIZE_N=block,
                                               num_warps=warps)
            mod._layer_norm_bwd_dwdb[(triton.cdiv(n, bn),)](p["pdw"], p["pdb"], p["dw"], p["db"],
                                                             min(group, m), n, BLOCK_SIZE_M=bm,
                                                             BLOCK_SIZE_N=bn)

        def torch_run():
            torch.autograd.grad(y, (x, w, b), dy, retain_graph=True)

        tric_run()
        triton_run()
        torch.cuda.synchronize()
        for side, buf in (("tric", t_buf), ("triton", p_buf)):
            got = (buf["dx"].float(), buf["dw"].float(), buf["db"].float())
            errs = [(g - r).abs().max().item() for g, r in zip(got, ref)]
            # dw and db sum M rows of fp16 partials: their error grows with M (the tutorial's
            # own test compares them at 1e-2 relative with M = 1151)
            tols = [1e-2, 2e-2 * ref[1].abs().max().item(), 2e-2 * ref[2].abs().max().item()]
            ok = all(e <= t for e, t in zip(errs, tols))
            print("N %5d %-6s dx %.3g  dw %.3g  db %.3g  %s" % (n, side, *errs,
                                                              "ok" if ok else "WRONG"), flush=True)
            if not ok and side == "tric":
                sys.exit("tric's layer norm backward wrong at N = %d" % n)
        if check_only:
            continue
        sides = [("tric", tric_run), ("triton", triton_run), ("torch", torch_run)]
        t = median_times(sides, ROUNDS)
        gbs = 3 * x.numel() * x.element_size() * 1e-6  # x, dy read, dx written (the tutorial's)
        print("N %5d  tric %7.1f  triton %7.1f  torch %7.1f GB/s  tric/triton %.3f  "
              "tric/torch %.3f" % (n, gbs / t["tric"], gbs / t["triton"], gbs / t["torch"],
                                   t["triton"] / t["tric"], t["torch"] / t["tric"]), flush=True)


if __name__ == "__main__":
    main(sys.argv)
