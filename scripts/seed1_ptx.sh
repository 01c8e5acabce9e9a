#!/usr/bin/env bash
# Seed 1's matmul_kernel and seed 2's kernel_matmul at one config, each with an fp32 and an fp16
# C, as PTX for scripts/tric_ptx_do_bench.py (which times each beside Triton's kernel of the same
# seed, config and C dtype): seed 1 as written stores fp32, seed 2 fp16, so the four files part
# what the masks, the `% M` wrap and the ungrouped order cost from what the C bytes cost.
# Usage: scripts/seed1_ptx.sh BUILD OUTDIR [BM BN BK WARPS STAGES] (default 128 256 64 8 4), here;
# then on the GPU machine: python3 scripts/tric_ptx_do_bench.py 2048,4096 OUTDIR/*.ptx
set -euo pipefail
B=$1 OUT=$2
BM=${3:-128} BN=${4:-256} BK=${5:-64} W=${6:-8} S=${7:-4}
cd "$(dirname "$0")/.."
mkdir -p "$OUT"
for c in fp32 fp16; do
    sig="*fp16:16,*fp16:16,*$c:16,i32:16,i32:16,i32:16,i32:16,i32:1,i32:16,i32:1,i32:16,i32:1"
    common=(examples/matmul.tri --signature="$sig" -D BLOCK_SIZE_M=$BM -D BLOCK_SIZE_N=$BN
            -D BLOCK_SIZE_K=$BK --num-warps=$W --num-stages=$S --arch=sm_90a)
    # the file name ends in _s<stages>.ptx: tric_ptx_do_bench.py reads the stage count there
    "$B/tric" "${common[@]}" --kernel=matmul_kernel -o "$OUT/seed1_c${c}_s$S.ptx"
    "$B/tric" "${common[@]}" --kernel=kernel_matmul -D GROUP_SIZE_M=8 -D T_C=tl.float${c#fp} \
        -D T_ACC=tl.float32 -o "$OUT/seed2_c${c}_s$S.ptx"
done
ls "$OUT"
