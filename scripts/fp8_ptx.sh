#!/usr/bin/env bash
# scripts/fp8_ptx.sh BUILD OUTDIR [CONFIGS]: seed 2's kernel_matmul (examples/matmul.tri) with fp8
# e4m3 A [M, K] and B read along K (B's storage [N, K], K contiguous: wgmma's fp8 form reads both
# operands K-major), fp16 C, fp32 accumulator, GROUP_SIZE_M 8 unless a config names another,
# compiled by BUILD/tric for sm_90a into OUTDIR/fp8_<BM>x<BN>x<BK>_w<WARPS>_s<STAGES>[_g<GROUP>][_KIND].ptx, one file a config, for
# scripts/bench_fp8.py on the GPU machine. CONFIGS: "BM,BN,BK,WARPS,STAGES[,KIND[,GROUP]] ..."
# (GROUP: GROUP_SIZE_M, 8 when not given; KIND may be empty: seed 2 as written. KIND ws:
# tests/lit/codegen/warp_specialize.tri's ws_matmul, seed 2's grouped kernel with its K loop
# asking warp_specialize=True, C fp16; p, pws, pp: tutorial 09's persistent matmul through
# descriptors, examples/persistent_desc_matmul.tri, B [N, K] read as b.T, NUM_SMS 132, as
# written, with its loop over tiles warp-specialized, and that with --pingpong; sk, skd: seed 2
# with --stream-k, and with --stream-k --deep-pipeline; pr: bench/fp8_promoted.tri, seed 2 with
# max_num_imprecise_acc=BLOCK_SIZE_K, its partial sums added in fp32; ppr, ppws:
# bench/fp8_promoted_persistent.tri, tutorial 09 with that limit, as written and warp-specialized,
# NUM_SMS 132). ptxas -v's
# registers and spills go to OUTDIR/ptxas.txt when ptxas is here.
set -euo pipefail
cd "$(dirname "$0")/.."
build=$1 out=$2
configs=${3:-"128,256,128,8,3 128,256,128,8,4 128,128,128,4,4 128,128,128,4,5 256,128,128,8,3 128,256,64,8,4 128,128,128,8,4"}
mkdir -p "$out"
# a, b, c, M, N, K, stride_am, stride_ak (1), stride_bk (1: B along K), stride_bn, stride_cm, stride_cn (1)
sig='*fp8e4nv:16,*fp8e4nv:16,*fp16:16,i32:16,i32:16,i32:16,i32:16,i32:1,i32:1,i32:16,i32:16,i32:1'
psig='*fp8e4nv:16,*fp8e4nv:16,*fp16:16,i32:16,i32:16,i32:16'
for cfg in $configs; do
  IFS=, read -r bm bn bk warps stages kind group <<<"$cfg"
  group=${group:-8} gsuffix=
  if [ "$group" != 8 ]; then gsuffix=_g$group; fi
  name="fp8_${bm}x${bn}x${bk}_w${warps}_s${stages}${gsuffix}${kind:+_$kind}"
  s=$sig
  case "$kind" in
    ws) src=tests/lit/codegen/warp_specialize.tri kernel=ws_matmul extra=() ;;
    p|pws|pp)
      ws=False; [ "$kind" = p ] || ws=True
      src=examples/persistent_desc_matmul.tri kernel=matmul_kernel_descriptor_persistent s=$psig
      extra=(-D NUM_SMS=132 -D WARP_SPECIALIZE=$ws -D EPILOGUE_SUBTILE=False -D FLATTEN=False)
      if [ "$kind" = pp ]; then extra+=(--pingpong); fi ;;
    pr) src=bench/fp8_promoted.tri kernel=kernel_matmul_promoted extra=(-D MAX_IMPRECISE=$bk) ;;
    ppr|ppws)
      ws=False; [ "$kind" = ppr ] || ws=True
      src=bench/fp8_promoted_persistent.tri kernel=matmul_promoted_persistent s=$psig
      extra=(-D NUM_SMS=132 -D WARP_SPECIALIZE=$ws) ;;
    sk|skd)
      src=examples/matmul.tri kernel=kernel_matmul extra=(-D T_C=tl.float16 -D T_ACC=tl.float32 --stream-k)
      if [ "$kind" = skd ]; then extra+=(--deep-pipeline); fi ;;
    *) src=examples/matmul.tri kernel=kernel_matmul extra=(-D T_C=tl.float16 -D T_ACC=tl.float32) ;;
  esac
  "$build/tric" "$src" --kernel=$kernel --signature="$s" --arch=sm_90a \
    -D BLOCK_SIZE_M=$bm -D BLOCK_SIZE_N=$bn -D BLOCK_SIZE_K=$bk -D GROUP_SIZE_M=$group \
    "${extra[@]}" --num-warps=$warps --num-stages=$stages \
    -o "$out/$name.ptx"
done
bash scripts/ptxas_summary.sh "$out"
