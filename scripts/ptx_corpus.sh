#!/usr/bin/env bash
# The PTX corpus: a fixed set of kernels compiled to PTX, to show that a code-generator change
# (a compile-time one, say) leaves the kernels alone. Compiles every entry into OUTDIR/NAME.ptx,
# runs `ptxas -v` for its architecture on it (OUTDIR/NAME.ptxas; a rejected PTX, or one whose
# wgmma ops ptxas serializes, is reported and the exit status is 1) and writes
# OUTDIR/registers.txt (NAME arch registers). The entries: seed 2
# (128x128x64 w4, 128x256x64 w8, 64x64x32 w4) for sm_90a and sm_80, seed 1 masked, seed-1
# vector_add, examples/attention.tri, softmax.tri and layer_norm.tri with bench_norms' configs,
# bench_linear's linear layer, and every `%tric` RUN line of tests/lit/codegen that writes PTX.
#
#   scripts/ptx_corpus.sh BUILD OUTDIR        compile the corpus with BUILD/tric (with
#                                             PTX_CORPUS_FLAGS: those tric options added to
#                                             every entry, e.g. "--persistent"; ONLY=attention:
#                                             only the entries whose name starts so)
#   scripts/ptx_corpus.sh --diff OLD NEW      compare two corpora modulo register numbering
#                                             (registers renamed in order of first use); prints
#                                             the differing entries with their line and
#                                             instruction counts and register counts
set -euo pipefail
cd "$(dirname "$0")/.."
ptxas=${PTXAS:-/usr/local/cuda/bin/ptxas}

# Renumbers %r123, %rd4, %f5, %p6, %h7, %hh8, %fd9 by first appearance per register class, so two
# PTX files that differ only in register allocation by LLVM compare equal.
normalize() {
  perl -pe 'BEGIN { %n = (); %c = (); }
    s{%(rd|rs|r|fd|f|hh|h|p)(\d+)\b}{ my $k = "$1$2"; $n{$k} //= "%$1" . ($c{$1}++); $n{$k} }ge; s{%(rd|rs|r|fd|f|hh|h|p)<\d+>}{%$1<>}g' "$1"
}

if [[ ${1:-} == --diff ]]; then
  old=$2 new=$3 ndiff=0 nsame=0
  for f in "$old"/*.ptx; do
    name=$(basename "$f" .ptx)
    if [[ ! -f $new/$name.ptx ]]; then
      echo "missing in $new: $name"; ndiff=$((ndiff + 1)); continue
    fi
    if cmp -s <(normalize "$f") <(normalize "$new/$name.ptx"); then
      nsame=$((nsame + 1)); continue
    fi
    ndiff=$((ndiff + 1))
    count() { grep -cE '^\s+[a-z@]' "$1" || true; }
    printf '%-44s lines %5d -> %5d   instructions %5d -> %5d   registers %s -> %s\n' "$name" \
      "$(wc -l <"$f")" "$(wc -l <"$new/$name.ptx")" "$(count "$f")" "$(count "$new/$name.ptx")" \
      "$(awk -v n="$name" '$1 == n { print $3 }' "$old/registers.txt")" \
      "$(awk -v n="$name" '$1 == n { print $3 }' "$new/registers.txt")"
  done
  echo "identical modulo register numbering: $nsame; different: $ndiff"
  exit 0
fi

build=${1:?usage: scripts/ptx_corpus.sh BUILD OUTDIR | --diff OLD NEW}
out=${2:?usage: scripts/ptx_corpus.sh BUILD OUTDIR | --diff OLD NEW}
tric="$build/tric"
mkdir -p "$out"
: >"$out/registers.txt"
status=0

# compile NAME ARGS...: BUILD/tric ARGS -o OUTDIR/NAME.ptx, then ptxas -v for the --arch given
# (sm_90, tric's default, when none is).
compile() {
  local name=$1; shift
  [[ -z ${ONLY:-} || $name == "$ONLY"* ]] || return 0
  # shellcheck disable=SC2086 # the flags are words
  set -- "$@" ${PTX_CORPUS_FLAGS:-}
  local arch=sm_90 a
  for a in "$@"; do [[ $a == --arch=* ]] && arch=${a#--arch=}; done
  if ! "$tric" "$@" -o "$out/$name.ptx" 2>"$out/$name.err"; then
    echo "tric failed: $name"; status=1; return
  fi
  if ! "$ptxas" -v -arch="$arch" "$out/$name.ptx" -o /dev/null >"$out/$name.ptxas" 2>&1; then
    echo "ptxas -arch=$arch rejected: $name"; status=1
  fi
  local regs
  regs=$(grep -o 'Used [0-9]* registers' "$out/$name.ptxas" | awk '{ s = s sep $2; sep = "," } END { print s }')
  echo "$name $arch ${regs:-?}" >>"$out/registers.txt"
}

MM2_SIG='*fp16:16,*fp16:16,*fp16:16,i32,i32,i32,i32:16,i32:1,i32:16,i32:1,i32:16,i32:1'
MM2=(examples/matmul.tri --kernel=kernel_matmul --signature="$MM2_SIG" -D GROUP_SIZE_M=8
  -D T_C=tl.float16 -D T_ACC=tl.float32)
for arch in sm_90a sm_80; do
  compile "seed2_128x128x64_w4_$arch" "${MM2[@]}" -D BLOCK_SIZE_M=128 -D BLOCK_SIZE_N=128 \
    -D BLOCK_SIZE_K=64 --num-warps=4 --num-stages=4 --arch=$arch
  compile "seed2_128x256x64_w8_$arch" "${MM2[@]}" -D BLOCK_SIZE_M=128 -D BLOCK_SIZE_N=256 \
    -D BLOCK_SIZE_K=64 --num-warps=8 --num-stages=3 --arch=$arch
  compile "seed2_64x64x32_w4_$arch" "${MM2[@]}" -D BLOCK_SIZE_M=64 -D BLOCK_SIZE_N=64 \
    -D BLOCK_SIZE_K=32 --num-warps=4 --arch=$arch
  compile "seed1_masked_64x64x32_$arch" examples/matmul.tri --kernel=matmul_kernel \
    --signature='*fp16:16,*fp16:16,*fp32:16,i32,i32,i32,i32,i32,i32,i32,i32,i32' \
    -D BLOCK_SIZE_M=64 -D BLOCK_SIZE_N=64 -D BLOCK_SIZE_K=32 --arch=$arch
done
# bench_compile.sh's sm_90 lines (mma.sync).
compile seed2_128x128x64_w4_sm_90 "${MM2[@]}" -D BLOCK_SIZE_M=128 -D BLOCK_SIZE_N=128 \
  -D BLOCK_SIZE_K=64 --arch=sm_90
compile vector_add_1024 examples/vector_add.tri --signature='*fp32:16,*fp32:16,*fp32:16,i32' \
  -D BLOCK_SIZE=1024

# examples/norms_kernels.h's compiles at bench_norms' shapes (4096 x 2048 / 8192 / 32768).
for t in fp32 fp16; do
  for n in 2048 8192 32768; do
    compile "softmax_${t}_$n" examples/softmax.tri --kernel=softmax_kernel \
      --signature="*$t:16,*$t:16,i32:16,i32:16,i32:16,i32:16" -D BLOCK_SIZE=$n -D num_stages=4 \
      --num-warps=8 --num-stages=4 --arch=sm_90a
    max=$((65536 / (${t#fp} / 8))); block=$((n < max ? n : max)); warps=$((block / 256))
    warps=$((warps < 1 ? 1 : warps > 8 ? 8 : warps))
    compile "layer_norm_${t}_$n" examples/layer_norm.tri --kernel=layer_norm_fwd \
      --signature="*$t:16,*$t:16,*$t:16,*$t:16,*fp32:16,*fp32:16,i32:16,i32:16,fp32" \
      -D BLOCK_SIZE=$block --num-warps=$warps --num-stages=3 --arch=sm_90a
  done
done
ATTN_SIG='*fp16:16,*fp16:16,*fp16:16,fp32,*fp32:16,*fp16:16'
ATTN_SIG+=',i32:16,i32:16,i32:16,i32:16,i32:16,i32:16,i32:16,i32:16,i32:16,i32:16,i32:16,i32:16'
ATTN_SIG+=',i32,i32:16'
for cfg in 128,64,8,3 128,64,4,3 128,128,8,2 128,128,8,3 64,64,4,3 128,64,8,3,ws 128,128,8,3,ws; do
  IFS=, read -r bm bn warps stages ws <<<"$cfg"
  for head in 64 128; do
    ((bn <= head)) || continue # attention.tri asserts BLOCK_N <= HEAD_DIM
    for stage in 1 3; do
      compile "attention_d${head}_s${stage}_${bm}x${bn}_w${warps}_s$stages${ws:+_ws}" \
        examples/attention.tri --kernel=attn_fwd --signature="$ATTN_SIG" -D HEAD_DIM=$head \
        -D BLOCK_M=$bm -D BLOCK_N=$bn -D STAGE=$stage -D num_stages=$stages \
        ${ws:+-D warp_specialize=True} --num-warps=$warps --num-stages=$stages --arch=sm_90a
    done
  done
done
# bench_linear's default: 128x128x64, 4 warps, 4 stages, x row-major, M = N = K = 4096.
for arch in sm_90a sm_80; do
  compile "linear_128x128x64_w4_$arch" examples/linear.tri --kernel=linear_kernel \
    --signature='*fp16:16,*fp16:16,*fp16:16,*fp16:16,i32:16,i32:16,i32:16,i32:16,i32:1,i32:16,i32:1,i32:16,i32:1' \
    -D BLOCK_M=128 -D BLOCK_N=128 -D BLOCK_K=64 --num-warps=4 --num-stages=4 --arch=$arch
done

# Every RUN line of tests/lit/codegen that compiles to PTX (no --emit, no `not`), with its own
# options: the words after %tric up to -o, a pipe or a redirection (a `>` after a space: a
# signature holds `tensordesc<...>`).
for test in tests/lit/codegen/*.tri tests/lit/codegen/*.test; do
  base=$(basename "$test"); base=${base%.*}; i=0
  while IFS= read -r line; do
    i=$((i + 1))
    eval "args=($line)"
    compile "lit_${base}_$i" "${args[@]}"
  done < <(grep -h 'RUN:.*%tric' "$test" | grep -v 'RUN: *not ' | grep -v -- '--emit=' |
    perl -ne 'if (/%tric\s+(.*?)(?:\s+-o\s|\s*\||\s+2>|\s+>|$)/) { $a = $1;
      $a =~ s{%S/}{tests/lit/codegen/}g; $a =~ s{%s\b}{'"$test"'}g;
      $a =~ s{%examples/}{examples/}g; print "$a\n" }' | awk '!seen[$0]++')
done
echo "$(wc -l <"$out/registers.txt") kernels in $out"
# ptxas serializing every wgmma of a kernel (C7512-C7515: a register a running wgmma reads or
# writes touched, or too few registers) is a performance bug in the PTX: reported, status 1
for f in "$out"/*.ptxas; do
  if grep -q "Potential Performance Loss" "$f"; then
    echo "ptxas serializes wgmma: $(basename "$f" .ptxas): $(grep -o '(C75[0-9]*)[^:]*' "$f" | head -1)"
    status=1
  fi
done
exit $status
