#!/usr/bin/env bash
# The main job: build tric, compile the seed kernels to PTX, and run the example programs
# (on the GPU when one is present, on tric's CPU interpreter otherwise; each says which).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc 2>/dev/null || echo 2)" >/dev/null
mkdir -p build/ptx
echo "== compile the seed kernels to PTX"
build/tric examples/vector_add.tri --signature='*fp32:16,*fp32:16,*fp32:16,i32' -D BLOCK_SIZE=1024 \
  -o build/ptx/vector_add.ptx
build/tric examples/matmul.tri --kernel=matmul_kernel --signature='*fp16:16,*fp16:16,*fp32:16,i32,i32,i32,i32,i32,i32,i32,i32,i32' \
  -D BLOCK_SIZE_M=64 -D BLOCK_SIZE_N=64 -D BLOCK_SIZE_K=32 -o build/ptx/matmul_kernel.ptx
build/tric examples/matmul.tri --kernel=kernel_matmul --signature='*fp16:16,*fp16:16,*fp16:16,i32,i32,i32,i32:16,i32:1,i32:16,i32:1,i32:16,i32:1' \
  -D BLOCK_SIZE_M=64 -D BLOCK_SIZE_N=64 -D BLOCK_SIZE_K=32 -D GROUP_SIZE_M=8 -D T_C=tl.float16 -D T_ACC=tl.float32 \
  -o build/ptx/kernel_matmul.ptx
# Seed 2 as its author runs it: autotuned over its decorator's 16 configs, one kernel per config.
build/tric examples/matmul.tri --kernel=kernel_matmul --signature='*fp16:16,*fp16:16,*fp16:16,i32,i32,i32,i32:16,i32:1,i32:16,i32:1,i32:16,i32:1' \
  -D GROUP_SIZE_M=8 -D T_C=tl.float16 -D T_ACC=tl.float32 -o build/ptx/kernel_matmul_tuned.ptx 2>/dev/null
echo "build/ptx/kernel_matmul_tuned.ptx: $(grep -c '^// tric.tune' build/ptx/kernel_matmul_tuned.ptx) kernels (one per autotune config)"
for f in build/ptx/*.ptx; do
  line=$(grep -m1 '^// tric.kernel' "$f"); printf '%-28s %6d lines  %s\n' "$f" "$(wc -l < "$f")" "$line"
  if command -v ptxas >/dev/null || [ -x /usr/local/cuda/bin/ptxas ]; then
    "$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)" -arch=sm_90 "$f" -o /dev/null && echo "    ptxas -arch=sm_90: ok"
  fi
done
echo "== run the examples"
build/vector_add 98437
build/matmul 257 129 100
