#!/usr/bin/env python3
# scripts/perf_table.py DIR [--png=FILE]: the tric / Triton / cuBLAS comparison from the files
# scripts/gpu_perf.sh leaves in DIR:
#   tric_matmul.csv, tric_matmul_sm80.csv, tric_linear.csv   (bench_matmul / bench_linear --csv)
#   tric_linear_plain.csv                                    (bench_linear --plain-signature)
#   triton_linear.csv                                        (scripts/triton_linear.py --csv)
#   anchors.json                                             (scripts/triton_anchor.py, OUT=DIR)
# Prints two tables: the seed-2 matmul (fp16, TFLOPS per size: tric's best seed config on the
# device's arch and on sm_80, tric's seed 1, Triton autotuned over the same 13 configs with
# GROUP_SIZE_M 8, torch.matmul/cuBLAS, and the ratios tric/Triton, tric/cuBLAS), and the linear
# layer (per orientation, dtype, size: tric, tric compiled with no hints (launch specialization),
# Triton with the same configs, cuBLAS F.linear + relu, ratios). Missing files or cases show as "-". With --png and matplotlib importable, also draws
# TFLOPS against size per provider for seed 2.
# Standard library only (csv, json); runs anywhere Python 3 does.
import csv
import json
import os
import sys


def read_csv(path):
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def best_rows(rows):
    return [r for r in rows if r.get("row") == "best" and float(r.get("tflops") or 0) > 0]


def fmt(v, spec="%.1f"):
    return spec % v if v else "-"


def ratio(a, b):
    return "%.2f" % (a / b) if a and b else "-"


def main(argv):
    args = [a for a in argv[1:] if not a.startswith("--")]
    png = next((a.split("=", 1)[1] for a in argv[1:] if a.startswith("--png=")), None)
    d = args[0] if args else os.environ.get("OUT", "perf-out")
    tm = best_rows(read_csv(os.path.join(d, "tric_matmul.csv")))
    tm80 = best_rows(read_csv(os.path.join(d, "tric_matmul_sm80.csv")))
    tl = best_rows(read_csv(os.path.join(d, "tric_linear.csv")))
    tp = best_rows(read_csv(os.path.join(d, "tric_linear_plain.csv")))
    xl = best_rows(read_csv(os.path.join(d, "triton_linear.csv")))
    anchors = {}
    ap = os.path.join(d, "anchors.json")
    if os.path.exists(ap):
        with open(ap) as f:
            anchors = json.load(f)
    if not (tm or tm80 or tl or xl or anchors):
        print("perf_table.py: no results in %s" % d)
        return 1
    if anchors:
        print("# GPU %s, torch %s, triton %s" % (anchors.get("gpu"), anchors.get("torch"), anchors.get("triton")))

    # ---- matmul, fp16, TFLOPS --------------------------------------------------------------
    arch = next((r["arch"] for r in tm if r["kernel"] == "kernel_matmul"), "?")
    s2 = {int(r["M"]): float(r["tflops"]) for r in tm if r["kernel"] == "kernel_matmul"}
    s2cfg = {int(r["M"]): r["config"] for r in tm if r["kernel"] == "kernel_matmul"}
    s1 = {int(r["M"]): float(r["tflops"]) for r in tm if r["kernel"] == "matmul_kernel"}
    s80 = {int(r["M"]): float(r["tflops"]) for r in tm80 if r["kernel"] == "kernel_matmul"}
    tri = {int(r["mnk"]): r["triton_g8"] for r in anchors.get("matmul", [])}
    tri_cfg = {int(r["mnk"]): r.get("best", "") for r in anchors.get("matmul", [])}
    cub = {int(r["mnk"]): r["torch"] for r in anchors.get("matmul", [])}
    sizes = sorted(set(s2) | set(s1) | set(s80) | set(tri) | set(cub))
    if sizes:
        print()
        print("matmul fp16 (seed 2 kernel_matmul unless noted), TFLOPS; ratios of tric seed 2 (%s)" % arch)
        print("%6s %10s %10s %10s %10s %10s %9s %9s  %s" % (
            "M=N=K", "tric s2", "tric s2/80", "tric s1", "triton", "cuBLAS", "tric/tri", "tric/cub",
            "tric best config"))
        for s in sizes:
            print("%6d %10s %10s %10s %10s %10s %9s %9s  %s" % (
                s, fmt(s2.get(s)), fmt(s80.get(s)), fmt(s1.get(s)), fmt(tri.get(s)), fmt(cub.get(s)),
                ratio(s2.get(s), tri.get(s)), ratio(s2.get(s), cub.get(s)), s2cfg.get(s, "-")))
        if any(tri_cfg.values()):
            print("  (Triton's autotuned picks: %s)" % "; ".join(
                "%d: %s" % (s, tri_cfg[s]) for s in sorted(tri_cfg) if tri_cfg[s]))

    # ---- linear ------------------------------------------------------------------------------
    def key(r):
        return (r["orient"], r["dtype"], int(r["M"]), r["sig"])

    lt = {key(r): r for r in tl}
    # bench_linear --plain-signature labels its rows "plain->:16" / "plain->open"
    lp = {(r["orient"], r["dtype"], int(r["M"]), r["sig"].replace("plain->", "")): r for r in tp}
    lx = {key(r): r for r in xl if r["provider"] == "triton"}
    lc = {key(r): r for r in xl if r["provider"] == "cublas"}
    keys = sorted(set(lt) | set(lx) | set(lc), key=lambda k: (k[2] % 16 != 0, k[2], k[1] != "fp16", k[1], k[0] != "x_row"))
    if keys:
        print()
        print("linear y = relu(x @ w.T + b), TFLOPS (best config each)")
        print("%-6s %-5s %6s %-5s %8s %8s %8s %8s %9s %9s %9s  %s" % (
            "orient", "dtype", "M=N=K", "sig", "tric", "no-hints", "triton", "cuBLAS", "tric/tri", "tric/cub",
            "nohint/t", "tric config / triton config"))
        for k in keys:
            t = float(lt[k]["tflops"]) if k in lt else 0
            x = float(lx[k]["tflops"]) if k in lx else 0
            c = float(lc[k]["tflops"]) if k in lc else 0
            p = float(lp[k]["tflops"]) if k in lp else 0
            print("%-6s %-5s %6d %-5s %8s %8s %8s %8s %9s %9s %9s  %s / %s" % (
                k[0].replace("x_", ""), k[1], k[2], k[3], fmt(t), fmt(p), fmt(x), fmt(c), ratio(t, x),
                ratio(t, c), ratio(p, t), lt[k]["config"] if k in lt else "-",
                lx[k]["config"] if k in lx else "-"))

    if png and sizes:
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except Exception as e:  # matplotlib is optional
            print("# no chart: matplotlib does not import (%s)" % e)
            return 0
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for label, series, style in (("tric seed 2 (%s)" % arch, s2, "o-"), ("tric seed 2 (sm_80)", s80, "s"),
                                     ("tric seed 1", s1, "^--"), ("Triton seed 2 (autotuned)", tri, "o-"),
                                     ("cuBLAS (torch.matmul)", cub, "k.-")):
            xs = [s for s in sizes if series.get(s)]
            if xs:
                ax.plot(xs, [series[s] for s in xs], style, label=label)
        ax.set_xlabel("M = N = K")
        ax.set_ylabel("TFLOPS (fp16 in, fp32 accumulate)")
        ax.set_title("seed 2 matmul: %s" % anchors.get("gpu", "GPU"))
        ax.set_xscale("log", base=2)
        ax.set_xticks(sizes)
        ax.set_xticklabels([str(s) for s in sizes])
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
        ax.legend()
        fig.tight_layout()
        fig.savefig(png, dpi=120)
        print("# chart: %s" % png)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
