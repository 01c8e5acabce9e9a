#!/usr/bin/env bash
# scripts/bench_persistent_ws_ptx.sh BUILD OUTDIR: the PTX that scripts/bench_persistent_ws.py
# times: examples/persistent_desc_matmul.tri (tutorial 09's persistent matmul through
# descriptors), fp16 (PDESC_DTYPE=bf16: A, B and C bf16), sm_90a, NUM_SMS = 132, at each config below (BM,BN,BK,warps,stages[,sub]:
# sub stores C in two halves, EPILOGUE_SUBTILE) with WARP_SPECIALIZE False and True, and with
# FLATTEN True (the loop nest flattened, passes/flatten_loops.c; Triton 3.6's tutorial runs it so
# on Hopper when it does not warp-specialize): OUTDIR/pdesc_BMxBNxBK_wW_sS_wsX[_sub][_flat].ptx. ptxas -v's register and spill lines go to
# OUTDIR/ptxas.txt when ptxas is here (scripts/ptxas_summary.sh). PDESC_FLAGS: more tric flags for
# every file (--tma-store, --pingpong), PDESC_SUFFIX: appended to each name (_ts, _pp).
set -euo pipefail
cd "$(dirname "$0")/.."
build=$1 out=$2
mkdir -p "$out"
# BM BN BK warps stages [sub]
configs=${PDESC_CONFIGS:-"128,256,64,8,3 128,256,64,8,4,sub 128,128,64,4,4 128,128,64,8,4"}
dt=${PDESC_DTYPE:-fp16}
case $dt in fp16 | bf16) ;; *) echo "PDESC_DTYPE: fp16 or bf16" >&2; exit 2 ;; esac
for cfg in $configs; do
  IFS=, read -r bm bn bk warps stages sub <<<"$cfg"
  subtile=False suffix=
  if [ "${sub:-}" = sub ]; then subtile=True suffix=_sub; fi
  for variant in False True flat; do
    ws=$variant flatten=False flat=
    if [ "$variant" = flat ]; then ws=False flatten=True flat=_flat; fi
    "$build/tric" examples/persistent_desc_matmul.tri --arch=sm_90a \
      --signature="*$dt:16,*$dt:16,*$dt:16,i32:16,i32:16,i32:16" \
      -D BLOCK_SIZE_M=$bm -D BLOCK_SIZE_N=$bn -D BLOCK_SIZE_K=$bk -D GROUP_SIZE_M=8 -D NUM_SMS=132 \
      -D WARP_SPECIALIZE=$ws -D EPILOGUE_SUBTILE=$subtile -D FLATTEN=$flatten \
      --num-warps=$warps --num-stages=$stages ${PDESC_FLAGS:-} \
      -o "$out/pdesc_${bm}x${bn}x${bk}_w${warps}_s${stages}_ws${ws}${suffix}${flat}${PDESC_SUFFIX:-}.ptx"
  done
done
bash scripts/ptxas_summary.sh "$out"
