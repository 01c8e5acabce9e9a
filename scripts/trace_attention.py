#!/usr/bin/env python3
# scripts/trace_attention.py DIR: tutorial 06's forward, D = 128, not causal, as tric makes the grid
# persistent (DIR/attn.ptx: scripts/bench_attention_persistent_ptx.sh's grid_persistent.ptx) and
# the same with `scripts/trace_ptx.py attention` (DIR/attn_inst.ptx), at Z x H x N_CTX 4 x 32 x 1024
# and 4 x 8 x 4096: outputs checked against SDPA, do_bench medians of three rounds beside SDPA,
# then per consumer warpgroup the cycles from a tile's head to its first K iteration, of the K loop
# (and an iteration), of the epilogue and of the tile, per tile index: where a tile's time goes.
# With attn_inst.ptx from `trace_ptx.py attention_waits`, also the cycles each tile waits on the K
# loop's full mbarrier, and in its first iteration. Raw records go to $OUT/attn_N.bin (int64).
# docs/performance.md "Where stream-K's time goes".
import ctypes, os, statistics, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch, triton
from tric_ptx import TricPtx
from tri_attention import attention_args

d = sys.argv[1]
cuda = ctypes.CDLL("libcuda.so.1")
torch.empty(1, device="cuda")
def st(xs):
    xs = sorted(xs)
    return "med=%.0f min=%.0f max=%.0f" % (statistics.median(xs), xs[0], xs[-1])
for z, h, n in [(4, 32, 1024), (4, 8, 4096)]:
    torch.manual_seed(6)
    q, k, v = (torch.randn((z, h, n, 128), device="cuda", dtype=torch.float16) * 0.5 for _ in range(3))
    sc = 1.0 / 128 ** 0.5
    ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, scale=sc)
    runs = {}
    for name in ["attn", "attn_inst"]:
        t = TricPtx(cuda, os.path.join(d, name + ".ptx"))
        args, o = attention_args(q, k, v, sc)
        mbig = torch.zeros((1 << 22) + 132 * 16 * 2 * 32, device="cuda", dtype=torch.float32)
        args[4] = mbig
        run = t.launcher((n // 128, z * h), args)
        o.fill_(float("nan")); run(); torch.cuda.synchronize()
        err = (o.float() - ref.float()).abs().max().item()
        runs[name] = (run, o, mbig, err)
    runs["sdpa"] = (lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v, scale=sc), None, None, 0)
    times = {x: [] for x in runs}
    for r in range(3):
        for x in (list(runs) if r % 2 == 0 else list(runs)[::-1]):
            times[x].append(triton.testing.do_bench(runs[x][0], warmup=25, rep=100))
    fl = 4 * z * h * n * n * 128
    print("Z=%d H=%d N=%d: " % (z, h, n) + "  ".join("%s %.1f TFLOPS (err %.3g)" % (x, fl / statistics.median(t) * 1e-9, runs[x][3]) for x, t in times.items()))
    run, o, mbig, _ = runs["attn_inst"]
    mbig[1 << 22:].zero_()
    for _ in range(3): run()
    torch.cuda.synchronize()
    raw = mbig[1 << 22:].view(torch.int64).view(132, 16, 2, 16)[:, :, :, :12].cpu()
    raw.numpy().tofile(os.path.join(os.environ.get("OUT", "/tmp"), "attn_%d.bin" % n))
    t0 = min(int(raw[p, 0, 0, 0]) for p in range(132) if int(raw[p, 0, 0, 0]))
    iters = n // 128
    for wg in range(2):
        rows = []
        for p in range(132):
            for u in range(16):
                g0, g1, g2, c0, c1, c2, c3, c4, sm, _, wsum, wfirst = [int(x) for x in raw[p, u, wg]]
                if g0 == 0: continue
                rows.append((p, u, c1 - c0, c3 - c1, c4 - c3, c4 - c0, (g0 - t0) / 1e3, (g2 - t0) / 1e3,
                             wsum, wfirst))
        print(" WG%d tiles %d: head->first K iter %s; K loop %s (/iter %s); epilogue %s; tile %s" % (
            wg, len(rows), st([r[2] for r in rows]), st([r[3] for r in rows]), st([r[3] / iters for r in rows]),
            st([r[4] for r in rows]), st([r[5] for r in rows])))
        if any(r[8] for r in rows):  # attention_waits: the K loop's full-mbarrier waits
            print("   full-mbarrier wait a tile %s; its first iteration's %s; a later one's %s" % (
                st([r[8] for r in rows]), st([r[9] for r in rows]),
                st([(r[8] - r[9]) / max(iters - 1, 1) for r in rows])))
        for u in range(9):
            rr = [r for r in rows if r[1] == u]
            if rr: print("   tile #%d (%d): tile cycles %s, start us %s, end us %s" % (u, len(rr), st([r[5] for r in rr]), st([r[6] for r in rr]), st([r[7] for r in rr])))
        ends = {}
        for r in rows: ends[r[0]] = max(ends.get(r[0], 0), r[7])
        print("   program end us %s" % st(list(ends.values())))
