#!/usr/bin/env bash
# scripts/bench_attention_persistent_ptx.sh BUILD OUTDIR: the PTX scripts/bench_attention_persistent.py
# times: tutorial 06's forward (examples/attention.tri, not causal) as a grid, and as the persistent
# kernel of examples/attention_persistent.tri with and without its loop over tiles asking
# warp_specialize, and as the grid made persistent by tric (--persistent, passes/persistent.c), fp16,
# HEAD_DIM 128, 128 x 128 blocks on 8 warps, 3 stages, sm_90a: OUTDIR/grid.ptx,
# OUTDIR/persistent_wsFalse.ptx, OUTDIR/persistent_wsTrue.ptx, OUTDIR/grid_persistent.ptx.
set -euo pipefail
cd "$(dirname "$0")/.."
build=$1 out=$2
mkdir -p "$out"
sig='*fp16:16,*fp16:16,*fp16:16,fp32,*fp32:16,*fp16:16,i32:16,i32:16,i32:16,i32:16,i32:16,i32:16'
sig+=',i32:16,i32:16,i32:16,i32:16,i32:16,i32:16'
cfg=(-D HEAD_DIM=128 -D BLOCK_M=128 -D BLOCK_N=128 -D num_stages=3 --num-warps=8 --num-stages=3
  --arch=sm_90a)
"$build/tric" examples/attention.tri --kernel=attn_fwd --signature="$sig,i32,i32:16" -D STAGE=1 \
  "${cfg[@]}" -o "$out/grid.ptx"
"$build/tric" examples/attention.tri --kernel=attn_fwd --signature="$sig,i32,i32:16" -D STAGE=1 \
  "${cfg[@]}" --persistent -o "$out/grid_persistent.ptx"
for ws in False True; do
  "$build/tric" examples/attention_persistent.tri --signature="$sig,i32,i32,i32:16" \
    -D NUM_SMS=132 -D warp_specialize=$ws "${cfg[@]}" -o "$out/persistent_ws$ws.ptx"
done
