#!/usr/bin/env bash
# scripts/bench_liger_ce_ptx.sh LIGER_DIR BUILD OUTDIR: Liger-Kernel's fused cross-entropy
# (LIGER_DIR/src/liger_kernel/ops/cross_entropy.py, liger_cross_entropy_kernel, a checkout of
# github.com/linkedin/Liger-Kernel: the file is not ours to copy into this repository) compiled
# as written with BUILD/tric for sm_90a, at the arguments its cross_entropy_forward passes
# (no weight, no z-loss, no label smoothing, mean reduction, gradients in place, 32 warps,
# BLOCK_SIZE = min(32768, next_power_of_2(V))), the integers specialized as Triton does for
# scripts/bench_liger_ce.py's data: OUTDIR/ce_{fp32,bf16}_{32000,128256}.ptx.
set -euo pipefail
liger=$1 build=$2 out=$3
mkdir -p "$out"
src=$liger/src/liger_kernel/ops/cross_entropy.py
for dt in fp32 bf16; do
  for v in 32000 128256; do
    sig="*$dt:16,i32:16,*i64:16,i32:1,*fp32:16,*$dt:16,*$dt:16,i32:1,*fp32:16,i32,*i64:16,i32,i32:16,i32:16,i32:16,fp32,i32,fp32"
    "$build/tric" "$src" --kernel=liger_cross_entropy_kernel --arch=sm_90a --signature="$sig" \
      -D lse_square_scale=0.0 -D label_smoothing=0.0 -D 'reduction="mean"' -D RETURN_Z_LOSS=0 \
      -D RETURN_TOKEN_ACCURACY=0 -D RETURN_PREDICTED_TOKENS=0 -D BLOCK_SIZE=32768 -D HAS_WEIGHT=0 \
      -D HAS_SOFTCAPPING=0 -D HAS_GRADIENTS=1 --num-warps=32 -o "$out/ce_${dt}_$v.ptx"
  done
done
