#!/usr/bin/env bash
# scripts/ptxas_summary.sh OUTDIR: `ptxas -arch=sm_90a -v`'s register and spill lines of every
# OUTDIR/*.ptx, one line a file, into OUTDIR/ptxas.txt and on stdout; nothing where ptxas
# ($PTXAS, else /usr/local/cuda/bin/ptxas) is not here (the GPU machine). Used by the scripts that
# write PTX for a benchmark (bench_loops_ptx.sh, bench_persistent_ws_ptx.sh).
set -euo pipefail
out=$1
ptxas=${PTXAS:-/usr/local/cuda/bin/ptxas}
[ -x "$ptxas" ] || exit 0
: >"$out/ptxas.txt"
for f in "$out"/*.ptx; do
  echo "$(basename "$f"): $("$ptxas" -arch=sm_90a -v "$f" -o /dev/null 2>&1 | grep -E 'registers|spill' | tr '\n' ' ')" >>"$out/ptxas.txt"
done
cat "$out/ptxas.txt"
