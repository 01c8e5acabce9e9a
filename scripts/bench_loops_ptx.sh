#!/usr/bin/env bash
# scripts/bench_loops_ptx.sh BUILD OUTDIR: the PTX that scripts/bench_loops.py times, compiled with
# BUILD/tric for sm_90a at the tutorials' configs: tutorial 06's attention backward at D = 64 and
# 128 (OUTDIR/attn_bwd_d64.ptx, attn_bwd_d128.ptx) and tutorial 09's persistent matmul, fp16,
# flattened by hand and nested under flatten=True (OUTDIR/persistent_matmul.ptx,
# persistent_nested_matmul.ptx; NUM_SMS = 132). ptxas -v's register and spill lines go to
# OUTDIR/ptxas.txt when ptxas is here (scripts/ptxas_summary.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
build=$1 out=$2
mkdir -p "$out"
bwd_sig='*fp16:16,*fp16:16,*fp16:16,fp32,*fp16:16,*fp16:16,*fp16:16,*fp16:16,*fp32:16,*fp32:16,i32:16,i32:16,i32:16,i32:1,i32,i32:16'
for d in 64 128; do
  "$build/tric" examples/attention_bwd.tri --kernel=_attn_bwd --signature="$bwd_sig" --arch=sm_90a \
    -D BLOCK_M1=32 -D BLOCK_N1=128 -D BLOCK_M2=128 -D BLOCK_N2=32 -D BLK_SLICE_FACTOR=2 \
    -D HEAD_DIM=$d --num-warps=4 --num-stages=5 -o "$out/attn_bwd_d$d.ptx"
done
for p in persistent_matmul persistent_nested_matmul; do
  "$build/tric" examples/$p.tri --arch=sm_90a \
    --signature='*fp16:16,*fp16:16,*fp16:16,i32:16,i32:16,i32:16,i32:16,i32:1,i32:16,i32:1,i32:16,i32:1' \
    -D BLOCK_SIZE_M=128 -D BLOCK_SIZE_N=256 -D BLOCK_SIZE_K=64 -D GROUP_SIZE_M=8 -D NUM_SMS=132 \
    --num-warps=8 --num-stages=3 -o "$out/$p.ptx"
done
bash scripts/ptxas_summary.sh "$out"
