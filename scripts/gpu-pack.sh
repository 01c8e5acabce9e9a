#!/usr/bin/env bash
# Packs what the GPU machine needs from a build made here (it has no LLVM, flex or bison) into
# .carry/gpu (ignored by git; name it in the device tool's `carry`): libtric.so stripped, tric,
# the examples, the gpu tests and the benchmarks, in the build's layout so RPATHs still resolve.
# Usage: scripts/gpu-pack.sh [build-dir]   then on the GPU machine: bash scripts/gpu.sh .carry/gpu
# (tests and examples) or bash scripts/gpu_perf.sh [--quick] (tric vs Triton vs cuBLAS).
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-build}
D=.carry/gpu
rm -rf "$D"; mkdir -p "$D/tests" "$D/bench"
strip -o "$D/libtric.so" "$B/libtric.so"
cp "$B/tric" "$B/vector_add" "$B/matmul" "$D/"
cp "$B"/tests/gpu_* "$D/tests/" 2>/dev/null || true
cp "$B"/tests/unit_codegen_gpu_diff "$D/tests/" 2>/dev/null || true
for f in "$B"/bench/bench_*; do [ -x "$f" ] && [ -f "$f" ] && cp "$f" "$D/bench/"; done
# scripts/gpu_perf.sh needs these two (bench_linear times examples/linear.tri).
for b in bench_matmul bench_linear; do
    [ -x "$D/bench/$b" ] || { echo "gpu-pack.sh: $B/bench/$b not built" >&2; exit 1; }
done
du -sh "$D"
