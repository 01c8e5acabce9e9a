#!/usr/bin/env python3
# scripts/seed2_configs_table.py DIR: the table of scripts/seed2_configs.sh from the files it wrote
# in DIR (tric_{signed,rand}.txt from bench_matmul --all, triton_{signed,rand}.txt from
# triton_seed2_configs.py, cublas.txt from bench_seed2_report): per inputs and size, each side's
# best config, tric / Triton, and tric / Triton on every config both ran.
import collections
import os
import re
import sys


def tric_rows(path):
    rows = collections.defaultdict(dict)
    for line in open(path):
        m = re.match(r"#\s+kernel_matmul\s+(\d+)\s+(\S+)\s+([\d.]+)\s+([\d.]+)", line)
        if m:
            cfg = m.group(2).replace(",w", ",").replace(",s", ",")
            rows[int(m.group(1))][cfg] = float(m.group(4))
    return rows


def triton_rows(path):
    rows = collections.defaultdict(dict)
    for line in open(path):
        m = re.match(r"(\d+) (\S+) ([\d.]+) ms ([\d.]+) TFLOPS", line)
        if m:
            rows[int(m.group(1))][m.group(2)] = float(m.group(4))
    return rows


def main(d):
    cublas = {}
    if os.path.exists(os.path.join(d, "cublas.txt")):
        for line in open(os.path.join(d, "cublas.txt")):
            m = re.match(r"cublas\s+(\d+)\s+[\d.]+\s+([\d.]+)", line)
            if m:
                cublas[int(m.group(1))] = float(m.group(2))
    for inputs in ("signed", "rand"):
        t = tric_rows(os.path.join(d, "tric_%s.txt" % inputs))
        r = triton_rows(os.path.join(d, "triton_%s.txt" % inputs))
        print("\ninputs: %s\n" % ("uniform in [-1, 1)" if inputs == "signed" else "uniform in [0, 1)"))
        print("| M=N=K | tric (best config) | Triton (best config) | tric / Triton | tric / cuBLAS | per config: tric / Triton |")
        print("| ---: | --- | --- | ---: | ---: | --- |")
        for s in sorted(t):
            if not t[s] or not r.get(s):
                continue
            tc = max(t[s], key=t[s].get)
            rc = max(r[s], key=r[s].get)
            per = ", ".join("%s %.2f" % (c, t[s][c] / r[s][c]) for c in sorted(t[s]) if c in r[s])
            cb = "%.2f" % (t[s][tc] / cublas[s]) if s in cublas and inputs == "rand" else "-"
            print("| %d | %.1f (%s) | %.1f (%s) | %.3f | %s | %s |" % (
                s, t[s][tc], tc, r[s][rc], rc, t[s][tc] / r[s][rc], cb, per))
    if cublas:
        print("\ncuBLAS ([0, 1) data): " + ", ".join("%d: %.1f" % kv for kv in sorted(cublas.items())))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "seed2-configs")
