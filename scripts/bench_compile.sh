#!/usr/bin/env bash
# Compile-time benchmark: the tric binary on the seed kernels, .tri -> PTX, N runs each; prints the
# median wall time and the median CPU time (user + sys; less sensitive to a busy machine). A
# benchmark, not a test. Usage: scripts/bench_compile.sh [build-dir] [runs] [callgrind]
# With `callgrind` as the third argument each line is instead the number of instructions one run
# executes under valgrind's callgrind (millions): slow (~10 s a line) but the same on a busy
# machine, where the wall and CPU medians of a 2-core box shared with a build move by 30%.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}; runs=${2:-21}; mode=${3:-time}
tric="$build/tric"
median() { sort -n | sed -n "$(( (runs + 1) / 2 ))p"; }
bench() {
  local label=$1; shift
  if [[ $mode == callgrind ]]; then
    printf '%-40s %8s M instructions (callgrind)\n' "$label" "$(valgrind --tool=callgrind \
      --callgrind-out-file=/dev/null "$tric" "$@" -o /dev/null 2>&1 |
      awk '/refs:/ { gsub(",", "", $4); printf "%.1f", $4 / 1e6 }')"
    return
  fi
  local walls=() cpus=()
  for _ in $(seq "$runs"); do
    local t
    t=$( { TIMEFORMAT='%R %U %S'; time "$tric" "$@" -o /dev/null; } 2>&1 )
    walls+=("$(awk '{printf "%.1f", $1 * 1000}' <<<"$t")")
    cpus+=("$(awk '{printf "%.1f", ($2 + $3) * 1000}' <<<"$t")")
  done
  printf '%-40s wall %6s ms   cpu %6s ms   (median of %d)\n' "$label" \
    "$(printf '%s\n' "${walls[@]}" | median)" "$(printf '%s\n' "${cpus[@]}" | median)" "$runs"
}
MM2_SIG='*fp16:16,*fp16:16,*fp16:16,i32,i32,i32,i32:16,i32:1,i32:16,i32:1,i32:16,i32:1'
MM2_DEFS=(-D GROUP_SIZE_M=8 -D T_C=tl.float16 -D T_ACC=tl.float32)
bench "seed-2 matmul 128x128x64 w4 sm_90a" examples/matmul.tri --kernel=kernel_matmul --signature="$MM2_SIG" \
  -D BLOCK_SIZE_M=128 -D BLOCK_SIZE_N=128 -D BLOCK_SIZE_K=64 "${MM2_DEFS[@]}" --arch=sm_90a
bench "seed-2 matmul 128x128x64 w4 sm_90" examples/matmul.tri --kernel=kernel_matmul --signature="$MM2_SIG" \
  -D BLOCK_SIZE_M=128 -D BLOCK_SIZE_N=128 -D BLOCK_SIZE_K=64 "${MM2_DEFS[@]}" --arch=sm_90
bench "seed-2 matmul 64x64x32 w4 sm_90" examples/matmul.tri --kernel=kernel_matmul --signature="$MM2_SIG" \
  -D BLOCK_SIZE_M=64 -D BLOCK_SIZE_N=64 -D BLOCK_SIZE_K=32 "${MM2_DEFS[@]}" --arch=sm_90
bench "seed-1 matmul 64x64x32 w4 sm_90" examples/matmul.tri --kernel=matmul_kernel \
  --signature='*fp16:16,*fp16:16,*fp32:16,i32,i32,i32,i32,i32,i32,i32,i32,i32' \
  -D BLOCK_SIZE_M=64 -D BLOCK_SIZE_N=64 -D BLOCK_SIZE_K=32
bench "seed-1 vector_add 1024 w4 sm_90" examples/vector_add.tri --signature='*fp32:16,*fp32:16,*fp32:16,i32' -D BLOCK_SIZE=1024
