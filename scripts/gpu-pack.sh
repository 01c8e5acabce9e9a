#!/usr/bin/env bash
# Packs what the GPU machine needs from a build made here (it has no LLVM, flex or bison) into
# .carry/gpu (ignored by git; name it in the device tool's `carry`): libtric_internal.so stripped
# (the library every program of the build links; the installable libtric.so and the static `tric`
# CLI are another copy of LLVM each, and nothing on the GPU machine needs them),
# libtric_runtime.so, the examples, the gpu tests and the benchmarks, in the build's layout so
# RPATHs still resolve.
# Usage: scripts/gpu-pack.sh [build-dir]   then on the GPU machine: bash scripts/gpu.sh .carry/gpu
# (tests and examples) or bash scripts/gpu_perf.sh [--quick] (tric vs Triton vs cuBLAS).
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-build}
D=.carry/gpu
rm -rf "$D"; mkdir -p "$D/tests" "$D/bench"
strip -o "$D/libtric_internal.so" "$B/libtric_internal.so"
# libtric_runtime (no LLVM, small), for vector_add_aot, under its soname as the program needs it.
soname=$(readelf -d "$B/libtric_runtime.so" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
strip -o "$D/$soname" "$B/libtric_runtime.so"
# vector_add_aot carries its kernels inside (tric_add_kernels ... EMBED).
cp "$B/vector_add" "$B/matmul" "$B/vector_add_aot" "$D/"
cp "$B"/tests/gpu_* "$D/tests/" 2>/dev/null || true
cp "$B"/tests/unit_codegen_gpu_diff "$B"/tests/unit_codegen_gpu_random "$D/tests/" 2>/dev/null || true
for f in "$B"/bench/bench_*; do [ -x "$f" ] && [ -f "$f" ] && cp "$f" "$D/bench/"; done
# scripts/gpu_perf.sh needs these two (bench_linear times examples/linear.tri).
for b in bench_matmul bench_linear; do
    [ -x "$D/bench/$b" ] || { echo "gpu-pack.sh: $B/bench/$b not built" >&2; exit 1; }
done
du -sh "$D"
