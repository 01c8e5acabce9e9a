#!/usr/bin/env bash
# scripts/bench_grouped_ptx.sh BUILD OUTDIR: the PTX that scripts/bench_grouped.py times:
# examples/grouped_matmul.tri (Triton's tutorial 08 grouped GEMM), fp16, sm_90a, NUM_SM 132, at
# each config below (BM,BN,BK,warps,stages; GROUPED_CONFIGS overrides the tutorial's three
# whole-GPU configs on its default 4 warps and 3 stages): OUTDIR/grouped_BMxBNxBK_wW_sS.ptx.
# ptxas -v's register and spill lines go to OUTDIR/ptxas.txt when ptxas is here.
set -euo pipefail
cd "$(dirname "$0")/.."
build=$1 out=$2
mkdir -p "$out"
configs=${GROUPED_CONFIGS:-"128,128,32,4,3 128,128,64,4,3 64,128,64,4,3"}
for cfg in $configs; do
  IFS=, read -r bm bn bk warps stages <<<"$cfg"
  "$build/tric" examples/grouped_matmul.tri --arch=sm_90a \
    --signature="*u64:16,*u64:16,*u64:16,*i32:16,*i32:16,i32" \
    -D NUM_SM=132 -D BLOCK_SIZE_M=$bm -D BLOCK_SIZE_N=$bn -D BLOCK_SIZE_K=$bk \
    --num-warps=$warps --num-stages=$stages -o "$out/grouped_${bm}x${bn}x${bk}_w${warps}_s${stages}.ptx"
done
bash scripts/ptxas_summary.sh "$out"
