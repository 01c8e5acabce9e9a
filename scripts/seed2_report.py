#!/usr/bin/env python3
# scripts/seed2_report.py CSV [CSV...] [--png OUT.png] [--md OUT.md]: seed 2's report from the
# CSVs bench/bench_seed2_report (tric_gm_0/8/16, cublas) and scripts/triton_seed2_report.py
# (triton_gm_0/8/16, torch) write, columns provider,M,N,K,ms,tflops,config,tune_ms. Several CSVs
# of each kind (a sweep split over runs) merge; a (provider, size) seen twice keeps the last.
#   - prints and (--md) writes a markdown table: one row per size, one TFLOPS column per provider,
#     then tric/cuBLAS and tric/Triton, tric being the best of the tric lines at that size and
#     Triton the best of the triton lines (cuBLAS: the cublas line, else torch's), and the
#     first-launch (tuning) times of the best tric and Triton lines (tune_ms: the bar is tric's
#     first launch taking no longer than Triton's autotuner);
#   - (--png) draws TFLOPS against M = N = K, one line per provider, as the seed's chart does
#     (matplotlib, Agg backend; skipped with a message where matplotlib is missing).
# Standard library otherwise; runs anywhere Python 3 does.
import csv
import os
import sys

# Column order: the seed's chart names torch first, then its Triton lines; tric's follow.
ORDER = ["cublas", "torch", "triton_gm_0", "triton_gm_8", "triton_gm_16", "tric_gm_0",
         "tric_gm_8", "tric_gm_16"]


def read(paths):
    data = {}  # (provider, M) -> row
    for p in paths:
        with open(p, newline="") as f:
            for r in csv.DictReader(f):
                try:
                    data[(r["provider"], int(r["M"]))] = {
                        "tflops": float(r.get("tflops") or 0),
                        "ms": float(r.get("ms") or 0),
                        "tune_ms": float(r.get("tune_ms") or 0),
                        "config": r.get("config", ""),
                    }
                except (KeyError, ValueError):
                    print("seed2_report.py: %s: a row without provider/M/tflops: %r" % (p, r),
                          file=sys.stderr)
    return data


def providers_of(data):
    seen = {p for p, _ in data}
    return [p for p in ORDER if p in seen] + sorted(seen - set(ORDER))


def best(data, size, prefix):
    """(tflops, provider) of the fastest line whose name starts with prefix at size, or (0, None)."""
    cands = [(data[(p, m)]["tflops"], p) for p, m in data if m == size and p.startswith(prefix)
             and data[(p, m)]["tflops"] > 0]
    return max(cands) if cands else (0.0, None)


def ratio(a, b):
    return "%.3f" % (a / b) if a and b else "-"


def table(data):
    provs = providers_of(data)
    sizes = sorted({m for _, m in data})
    head = ["M=N=K"] + provs + ["tric/cuBLAS", "tric/Triton", "tric tune ms", "Triton tune ms",
                                "best tric (config)"]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---:" for _ in head[:-1]) + "|:---|"]
    for s in sizes:
        cells = [str(s)]
        for p in provs:
            v = data.get((p, s), {}).get("tflops", 0)
            cells.append("%.1f" % v if v else "-")
        t, tp = best(data, s, "tric")
        x, xp = best(data, s, "triton")
        cub = data.get(("cublas", s), {}).get("tflops", 0) or data.get(("torch", s), {}).get("tflops", 0)
        cells += [ratio(t, cub), ratio(t, x)]
        cells.append("%.0f" % data[(tp, s)]["tune_ms"] if tp else "-")
        cells.append("%.0f" % data[(xp, s)]["tune_ms"] if xp else "-")
        cells.append("%s (%s)" % (tp, data[(tp, s)]["config"]) if tp else "-")
        lines.append("| " + " | ".join(cells) + " |")
    notes = [
        "",
        "TFLOPS = 2 M N K / t, fp16 A, B, C, fp32 accumulation; seed 2's kernel_matmul autotuned "
        "over its 16 configs (key M, N, K; tric's sk / dp lines also over each config's "
        "stream_k and deeper twins). tric/cuBLAS and tric/Triton: the best tric line over "
        "cuBLAS (cublasGemmEx; torch.matmul where there is no cublas line) and over the best "
        "Triton line. tune ms: the first launch at that size, synchronized (at a run's first size "
        "it includes compiling every config), of that best line.",
    ]
    return "\n".join(lines + notes) + "\n"


def chart(data, png):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("seed2_report.py: matplotlib is not importable: no chart (%s)" % png)
        return
    fig, ax = plt.subplots(figsize=(10, 6))
    for p in providers_of(data):
        pts = sorted((m, v["tflops"]) for (q, m), v in data.items() if q == p and v["tflops"] > 0)
        if pts:
            style = "-" if p.startswith("tric") else "--" if p.startswith("triton") else ":"
            ax.plot([m for m, _ in pts], [t for _, t in pts], style, marker="o", markersize=3,
                    label=p)
    ax.set_xlabel("M = N = K")
    ax.set_ylabel("TFLOPS")
    ax.set_title("matmul-tflops: seed 2 kernel_matmul, autotuned (fp16)")
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(png, dpi=120)
    print("seed2_report.py: wrote %s" % png)


def main(argv):
    paths, png, md = [], None, None
    i = 1
    while i < len(argv):
        a = argv[i]
        if a in ("--png", "--md") and i + 1 < len(argv):
            if a == "--png":
                png = argv[i + 1]
            else:
                md = argv[i + 1]
            i += 1
        elif a.startswith("--png="):
            png = a.split("=", 1)[1]
        elif a.startswith("--md="):
            md = a.split("=", 1)[1]
        elif a.startswith("-"):
            print("usage: seed2_report.py CSV [CSV...] [--png OUT.png] [--md OUT.md]",
                  file=sys.stderr)
            return 2
        else:
            paths.append(a)
        i += 1
    for p in [p for p in paths if not os.path.exists(p)]:
        print("seed2_report.py: %s: missing, left out" % p)
    paths = [p for p in paths if os.path.exists(p)]
    data = read(paths)
    if not data:
        print("seed2_report.py: no rows in %s" % (", ".join(paths) or "(no CSV)"))
        return 1
    text = table(data)
    print(text, end="")
    if md:
        with open(md, "w") as f:
            f.write("# Seed 2's report: TFLOPS against size\n\n" + text)
    if png:
        chart(data, png)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
