#!/usr/bin/env bash
# Compile-time benchmark: tric on the seed kernels, .tri -> PTX, median wall time of N runs
# (a benchmark, not a test). Usage: scripts/bench_compile.sh [build-dir] [runs]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}; runs=${2:-21}
tric="$build/tric"
bench() {
  local label=$1; shift
  local times=()
  for _ in $(seq "$runs"); do
    local t0 t1
    t0=$(date +%s%N); "$tric" "$@" -o /dev/null; t1=$(date +%s%N)
    times+=($(( (t1 - t0) / 1000 )))
  done
  local median
  median=$(printf '%s\n' "${times[@]}" | sort -n | sed -n "$(( (runs + 1) / 2 ))p")
  printf '%-34s median %7.1f ms over %d runs\n' "$label" "$(awk -v m="$median" 'BEGIN{print m/1000}')" "$runs"
}
bench "seed-2 matmul (kernel_matmul)" examples/matmul.tri --kernel=kernel_matmul \
  --signature='*fp16:16,*fp16:16,*fp16:16,i32,i32,i32,i32:16,i32:1,i32:16,i32:1,i32:16,i32:1' \
  -D BLOCK_SIZE_M=128 -D BLOCK_SIZE_N=128 -D BLOCK_SIZE_K=32 -D GROUP_SIZE_M=8 -D T_C=tl.float16 -D T_ACC=tl.float32
bench "seed-1 matmul (matmul_kernel)" examples/matmul.tri --kernel=matmul_kernel \
  --signature='*fp16:16,*fp16:16,*fp32:16,i32,i32,i32,i32,i32,i32,i32,i32,i32' \
  -D BLOCK_SIZE_M=64 -D BLOCK_SIZE_N=64 -D BLOCK_SIZE_K=32
bench "seed-1 vector_add" examples/vector_add.tri --signature='*fp32:16,*fp32:16,*fp32:16,i32' -D BLOCK_SIZE=1024
