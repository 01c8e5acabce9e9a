#!/usr/bin/env bash
# scripts/bench_layer_norm_bwd_ptx.sh BUILD OUTDIR: the PTX that scripts/bench_layer_norm_bwd.py
# times: examples/layer_norm_bwd.tri (Triton's tutorial 05 backward), fp16 x, w, dy, fp32 mean and
# rstd, sm_90a, with the tutorial's launch choices for each N below (LN_BWD_SIZES): BLOCK_SIZE_N the
# power of two >= N, num_warps min(max(BLOCK_SIZE_N / 256, 1), 8), GROUP_SIZE_M 256 / 128 / 96 / 64
# for N up to 1024 / 4096 / 8192 / more: OUTDIR/ln_bwd_dx_N.ptx; and the dw / db sum
# (BLOCK_SIZE_M 32, BLOCK_SIZE_N 128, 4 warps): OUTDIR/ln_bwd_dwdb.ptx. N, M and the stride are
# compiled divisible by 16 (`i32:16`), as Triton's launcher specializes them at these sizes.
set -euo pipefail
cd "$(dirname "$0")/.."
build=$1 out=$2
mkdir -p "$out"
for n in ${LN_BWD_SIZES:-1024 2048 4096 8192}; do
  block=1
  while [ $block -lt "$n" ]; do block=$((block * 2)); done
  warps=$((block / 256)); [ $warps -lt 1 ] && warps=1; [ $warps -gt 8 ] && warps=8
  group=64
  [ "$n" -le 8192 ] && group=96
  [ "$n" -le 4096 ] && group=128
  [ "$n" -le 1024 ] && group=256
  "$build/tric" examples/layer_norm_bwd.tri --kernel=_layer_norm_bwd_dx_fused --arch=sm_90a \
    --signature="*fp16:16,*fp16:16,*fp16:16,*fp16:16,*fp16:16,*fp16:16,*fp32:16,*fp32:16,*i32:16,i32:16,i32:16" \
    -D GROUP_SIZE_M=$group -D BLOCK_SIZE_N=$block --num-warps=$warps -o "$out/ln_bwd_dx_$n.ptx"
done
"$build/tric" examples/layer_norm_bwd.tri --kernel=_layer_norm_bwd_dwdb --arch=sm_90a \
  --signature="*fp16:16,*fp16:16,*fp16:16,*fp16:16,i32:16,i32:16" -D BLOCK_SIZE_M=32 -D BLOCK_SIZE_N=128 \
  --num-warps=4 -o "$out/ln_bwd_dwdb.ptx"
bash scripts/ptxas_summary.sh "$out"
