#!/usr/bin/env bash
# scripts/bench_stream_k_ptx.sh BUILD OUTDIR: the PTX that scripts/bench_stream_k.py times: seed 2's
# kernel_matmul (examples/matmul.tri), fp16 (SEED2_DTYPE=bf16: A, B and C bf16), sm_90a,
# GROUP_SIZE_M = 8, square sizes divisible by
# 256 (the signature's :16 hints), at each config below (BM,BN,BK,warps,stages) as written and with
# --stream-k: OUTDIR/seed2_BMxBNxBK_wW_sS_{grid,sk}.ptx. ptxas -v's register and spill lines go to
# OUTDIR/ptxas.txt when ptxas is here (scripts/ptxas_summary.sh). SEED2_FLAGS: more tric flags for
# every file (--tma-store), SEED2_SUFFIX: appended to each name (_ts; scripts/
# bench_fp32_matmul_ptx.py times such pairs). SEED2_WS=1: also OUTDIR/seed2_..._skws.ptx, the same
# matmul with its K loop written tl.range(..., warp_specialize=True)
# (tests/lit/codegen/warp_specialize.tri's ws_matmul, fp16 C) and --stream-k: a producer warpgroup
# runs the loop over units from 4 stages (docs/passes.md "warp_specialize"; on 3 or fewer the
# loop keeps none and the file is the _sk one).
set -euo pipefail
cd "$(dirname "$0")/.."
build=$1 out=$2
mkdir -p "$out"
configs=${SEED2_CONFIGS:-"128,256,64,8,3 128,128,64,4,4 128,256,64,8,4"}
dt=${SEED2_DTYPE:-fp16}
case $dt in fp16) t_c=tl.float16 ;; bf16) t_c=tl.bfloat16 ;; *) echo "SEED2_DTYPE: fp16 or bf16" >&2; exit 2 ;; esac
sig="*$dt:16,*$dt:16,*$dt:16,i32:16,i32:16,i32:16,i32:16,i32:1,i32:16,i32:1,i32:16,i32:1"
for cfg in $configs; do
  IFS=, read -r bm bn bk warps stages <<<"$cfg"
  for form in grid sk; do
    extra=
    if [ "$form" = sk ]; then extra=--stream-k; fi
    "$build/tric" examples/matmul.tri --kernel=kernel_matmul --arch=sm_90a --signature="$sig" \
      -D BLOCK_SIZE_M=$bm -D BLOCK_SIZE_N=$bn -D BLOCK_SIZE_K=$bk -D GROUP_SIZE_M=8 \
      -D T_C=$t_c -D T_ACC=tl.float32 --num-warps=$warps --num-stages=$stages $extra ${SEED2_FLAGS:-} \
      -o "$out/seed2_${bm}x${bn}x${bk}_w${warps}_s${stages}_${form}${SEED2_SUFFIX:-}.ptx"
  done
  if [ "${SEED2_WS:-0}" = 1 ]; then
    "$build/tric" tests/lit/codegen/warp_specialize.tri --kernel=ws_matmul --arch=sm_90a \
      --signature="$sig" -D BLOCK_SIZE_M=$bm -D BLOCK_SIZE_N=$bn -D BLOCK_SIZE_K=$bk \
      -D GROUP_SIZE_M=8 --num-warps=$warps --num-stages=$stages --stream-k ${SEED2_FLAGS:-} \
      -o "$out/seed2_${bm}x${bn}x${bk}_w${warps}_s${stages}_skws${SEED2_SUFFIX:-}.ptx"
  fi
done
bash scripts/ptxas_summary.sh "$out"
