#!/usr/bin/env python3
# scripts/norms_merge.py CSV... [--md FILE]: merges bench_norms's and triton_norms.py's CSVs
# (columns: provider,bench,dtype,M,N,head,causal,config,time_us,value,unit,row) into one table per
# measurement: tric, Triton and torch (GB/s or TFLOPS), tric / Triton, the issue 10 bar it is
# held to (attention >= 0.90 x Triton, softmax and layer norm >= 0.95 x Triton), and tric / torch
# (for attention torch's SDPA: issue 22's bar, >= 1.0). Only "best" rows.
import csv
import os
import sys

BARS = {"attention": 0.90, "softmax": 0.95, "layer_norm": 0.95}


def main(argv):
    md = None
    paths = []
    it = iter(argv)
    for a in it:
        if a == "--md":
            md = next(it)
        else:
            paths.append(a)
    rows, order = {}, []
    for p in paths:
        if not os.path.exists(p):
            print("# %s: missing" % p)
            continue
        with open(p) as f:
            for r in csv.DictReader(f):
                if r["row"] != "best":
                    continue
                key = (r["bench"], r["dtype"], int(r["M"]), int(r["N"]), int(r["head"]), int(r["causal"]))
                if key not in rows:
                    rows[key] = {}
                    order.append(key)
                rows[key][r["provider"]] = (float(r["value"]), r["unit"], r["config"])
    out = ["| kernel | dtype | shape | tric | Triton | torch | unit | tric/Triton | bar | tric/torch | tric config | Triton config |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    misses = compared = 0
    for key in order:
        bench, dtype, M, N, head, causal = key
        shape = "Z*H=%d N_CTX=%d D=%d %s" % (M, N, head, "causal" if causal else "full") if head else "%dx%d" % (M, N)
        got = rows[key]
        val = {p: got[p][0] for p in got}
        unit = next(iter(got.values()))[1]
        ratio = val["tric"] / val["triton"] if val.get("tric") and val.get("triton") else None
        vs_torch = val["tric"] / val["torch"] if val.get("tric") and val.get("torch") else None
        bar = BARS.get(bench)
        verdict = "" if ratio is None or bar is None else ("ok" if ratio >= bar else "MISS")
        misses += verdict == "MISS"
        compared += verdict != ""
        fmt = lambda p: "%.1f" % val[p] if p in val else "-"
        out.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            bench, dtype, shape, fmt("tric"), fmt("triton"), fmt("torch"), unit,
            "%.3f" % ratio if ratio is not None else "-", ("%.2f %s" % (bar, verdict)) if verdict else "-",
            "%.3f" % vs_torch if vs_torch is not None else "-",
            got.get("tric", (0, 0, "-"))[2], got.get("triton", (0, 0, "-"))[2]))
    out.append("")
    out.append("%d of %d rows with both tric and Triton below their bar (%d rows in all)" % (misses, compared, len(order)))
    text = "\n".join(out)
    print(text)
    if md:
        with open(md, "w") as f:
            f.write(text + "\n")


main(sys.argv[1:])
