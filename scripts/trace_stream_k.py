#!/usr/bin/env python3
# scripts/trace_stream_k.py DIR: seed 2's 128x256 kernels at M = N = K in SIZES (default 3072,4096),
# each DIR/NAME.ptx for NAME in NAMES (default grid,ginst,sk,inst): every C checked against
# torch's (after one launch and again after the timing), do_bench medians of three rounds
# (alternating order) beside cuBLAS (torch), then, for a NAME starting with `ginst` (seed 2's grid
# kernel with `scripts/trace_ptx.py grid`) or `inst` (a `--stream-k` kernel with `trace_ptx.py
# units`), the records of the last of five back-to-back launches: per round of the grid, per unit
# kind (whole tile, a split tile's piece, its owner) and per unit index of stream-K, the K loop's
# cycles an iteration, the cycles after it, and when units start and end (globaltimer, us). The
# stream-K schedule is recomputed here as passes/stream_k.c builds it (its K ranges are taken
# last to first there, which changes no count here). Raw records go to $OUT/NAME_SIZE.bin (int64).
# docs/performance.md "Where stream-K's time goes" is its output.
import ctypes, os, sys, statistics
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch, triton
from tric_ptx import TricPtx

d = sys.argv[1]
out = os.environ.get("OUT", "/tmp")
cuda = ctypes.CDLL("libcuda.so.1")
torch.empty(1, device="cuda")
P_SM = torch.cuda.get_device_properties(0).multi_processor_count

def cdiv(a, b): return -(-a // b)

def schedule(T, P, I, p):
    rounds = T // P; left = T - rounds * P
    last_round = left + P if rounds > 0 else left
    if not (I > 0 and left > 0 and left * 4 <= P): last_round = 0
    dp = T - last_round; full = cdiv(dp - p, P) if dp > p else 0
    ski = last_round * I; per = cdiv(ski, P) if ski else 0
    begin = min(p * per, ski); end = min(begin + per, ski)
    units = [("whole", p + u * P, 0, I) for u in range(full)]
    if end > begin:
        fs = begin // I; into = begin - fs * I; last = (end - 1) // I
        for j in range(last - fs + 1):
            sk = fs + j; k0 = into if j == 0 else 0; k1 = min(I, end - sk * I)
            units.append(("owner" if k0 == 0 else "piece", dp + sk, k0, k1))
    return units

def stats(xs):
    xs = sorted(xs)
    return "n=%d med=%.0f min=%.0f max=%.0f" % (len(xs), statistics.median(xs), xs[0], xs[-1]) if xs else "none"

for size in [int(x) for x in os.environ.get("SIZES", "3072,4096").split(",")]:
    torch.manual_seed(size)
    a = torch.randn(size, size, device="cuda", dtype=torch.float16)
    b = torch.randn(size, size, device="cuda", dtype=torch.float16)
    ref = a @ b
    T = cdiv(size, 128) * cdiv(size, 256); I = cdiv(size, 64)
    sides = []
    for name in os.environ.get("NAMES", "grid,ginst,sk,inst").split(","):
        k = TricPtx(cuda, os.path.join(d, name + ".ptx"))
        cbig = torch.zeros(size * size + 64 * T // 2 + 4096, device="cuda", dtype=torch.float16)
        c = cbig[: size * size].view(size, size)
        Tk = cdiv(size, int(k.consts["BLOCK_SIZE_M"])) * cdiv(size, int(k.consts["BLOCK_SIZE_N"]))
        run = k.launcher((Tk,), [a, b, c, size, size, size, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1)])
        run(); torch.cuda.synchronize()
        err = (c.float() - ref.float()).abs().max().item()
        sides.append((name, run, k, cbig, err))
    ms = {}
    for rnd in range(3):
        for name, run, _, _, _ in (sides if rnd % 2 == 0 else sides[::-1]):
            ms.setdefault(name, []).append(triton.testing.do_bench(run, warmup=50, rep=200))
    cub = statistics.median([triton.testing.do_bench(lambda: a @ b, warmup=50, rep=200) for _ in range(3)])
    fl = 2 * size ** 3
    print("== %d: T=%d I=%d cuBLAS %.1f TFLOPS" % (size, T, I, fl / cub * 1e-9))
    for name, run, k, cbig, err in sides:
        cbig.zero_(); run(); torch.cuda.synchronize()
        err = max(err, (cbig[: size * size].view(size, size).float() - ref.float()).abs().max().item())
        m = statistics.median(ms[name])
        print("  %-6s %.4f ms %.1f TFLOPS (%.3f of cuBLAS) max err %.3g" % (name, m, fl / m * 1e-9, cub / m, err))
    # traces: one more launch each, after a warm-up
    for name, run, k, cbig, err in sides:
        if name.startswith("ginst"):
            for _ in range(5): run()
            torch.cuda.synchronize()
            raw = cbig[size * size:].view(torch.int64)[: T * 8].view(T, 8).cpu()
            raw.numpy().tofile(os.path.join(out, "%s_%d.bin" % (name, size)))
            st, en, cs, ce, sm = raw[:, 0], raw[:, 1], raw[:, 2], raw[:, 3], raw[:, 4]
            t0 = st.min().item(); span = (en.max() - st.min()).item()
            print("  grid trace: span %.1f us" % (span / 1e3))
            # per SM: CTAs in start order
            by = {}
            for i in range(T): by.setdefault(int(sm[i]), []).append(i)
            rounds = {}
            for s, ids in by.items():
                ids.sort(key=lambda i: int(st[i]))
                for r, i in enumerate(ids): rounds.setdefault(r, []).append(i)
            for r in sorted(rounds):
                ids = rounds[r]
                print("   round %d: %d CTAs, cycles %s, start at us %s, end at us %s" % (r, len(ids),
                      stats([int(ce[i] - cs[i]) for i in ids]), stats([(int(st[i]) - t0) / 1e3 for i in ids]), stats([(int(en[i]) - t0) / 1e3 for i in ids])))
            fin = [max(int(en[i]) for i in ids) - t0 for ids in by.values()]
            print("   SM finish us: %s" % stats([x / 1e3 for x in fin]))
        if name.startswith("inst"):
            ws = run.keep[4]
            ws.zero_()
            for _ in range(5): run()
            torch.cuda.synchronize()
            P = min(P_SM, T)
            flags = (4 * 2 * P + 255) // 256 * 256
            off = flags + P * 131072
            raw = ws[off: off + P * 16 * 64].view(torch.int64).view(P, 16, 8).cpu()
            raw.numpy().tofile(os.path.join(out, "%s_%d.bin" % (name, size)))
            t0 = min(int(raw[p, 0, 0]) for p in range(P))
            kinds = {}
            ends = []
            for p in range(P):
                us = schedule(T, P, I, p)
                for u, (kind, tile, k0, k1) in enumerate(us):
                    g0, g1, g2, c0, c1, c2 = [int(x) for x in raw[p, u, :6]]
                    it = k1 - k0
                    kinds.setdefault(kind, []).append((it, c1 - c0, c2 - c1, (g0 - t0) / 1e3, (g2 - t0) / 1e3, u))
                ends.append((int(raw[p, len(us) - 1, 2]) - t0) / 1e3)
            print("  %s trace: span %.1f us, program finish us %s" % (name, max(ends), stats(ends)))
            for kind, xs in kinds.items():
                print("   %-5s units %d: iters %s; K-loop cycles/iter %s; K-loop cycles %s; after-loop cycles %s; start us %s; end us %s" % (
                    kind, len(xs), stats([x[0] for x in xs]), stats([x[1] / max(x[0], 1) for x in xs]), stats([x[1] for x in xs]), stats([x[2] for x in xs]), stats([x[3] for x in xs]), stats([x[4] for x in xs])))
            for u in range(4):
                xs = [x for v in kinds.values() for x in v if x[5] == u]
                if xs: print("   unit #%d: cycles/iter %s, start us %s" % (u, stats([x[1] / max(x[0], 1) for x in xs]), stats([x[3] for x in xs])))
