#!/usr/bin/env bash
# scripts/norms_report.sh [BUILD_DIR] [--quick] [--no-torch]: issue 10's tutorial bars, run ON the GPU
# machine from the repo root with the packed build (default .carry/gpu: scripts/gpu-pack.sh build).
#   1. BUILD_DIR/bench/bench_norms: tric's softmax, layer norm and attention forward
#      (examples/softmax.tri, layer_norm.tri, attention.tri) -> tric_norms.csv
#   2. python3 scripts/triton_norms.py: Triton on the same .tri files, and torch -> triton_norms.csv
#   3. scripts/norms_merge.py: one table, tric / Triton per row, against the bars (attention
#      >= 0.90, softmax and layer norm >= 0.95) -> norms_table.md (printed)
# Everything goes under $OUT when set (else ./norms-out), one .log per step. About 1.5 minutes on
# an H100 (--quick: about half). TRIC_BENCH_REST_MS (default 0) rests the GPU before each timing
# on both sides. tric and Triton + torch run in two processes, one after the other, so a tric /
# torch ratio moves with the GPU's clock and temperature between them: issue 22's attention bar
# (tric against torch's SDPA) is scripts/attention_report.py's, which interleaves all three in one.
# Exit status: 1 when a step could not run or a check failed (see its log).
set -u
B=.carry/gpu
ARGS=()
TRITON_ARGS=()
for a in "$@"; do
    case $a in
        --quick) ARGS+=(--quick); TRITON_ARGS+=(--quick) ;;
        --no-torch) TRITON_ARGS+=(--no-torch) ;;
        -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
        -*) echo "norms_report.sh: unknown option $a" >&2; exit 2 ;;
        *) B=$a ;;
    esac
done
if [ ! -x "$B/bench/bench_norms" ]; then
    echo "norms_report.sh: $B/bench/bench_norms not found (build it, run scripts/gpu-pack.sh BUILD on the build machine and carry .carry/gpu)" >&2
    exit 2
fi
P=${OUT:-$PWD/norms-out}
mkdir -p "$P"
export TRIC_EXAMPLES_DIR="$PWD/examples"
TRIC_CACHE_DIR=$(mktemp -d "${TMPDIR:-/tmp}/tric-cache.XXXXXX")
TRITON_CACHE_DIR=$(mktemp -d "${TMPDIR:-/tmp}/triton-cache.XXXXXX")
export TRIC_CACHE_DIR TRITON_CACHE_DIR
status=0
step() { # step NAME LOGFILE CMD...
    local name=$1 log=$2
    shift 2
    echo "== $name"
    local t0=$SECONDS
    "$@" 2>&1 | tee "$P/$log"
    local rc=${PIPESTATUS[0]}
    echo "   ($name: exit $rc, $((SECONDS - t0)) s)"
    [ "$rc" = 0 ] || status=1
}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv 2>/dev/null | tee "$P/gpu.txt"
step "tric: bench_norms" tric_norms.log "$B/bench/bench_norms" ${ARGS[@]+"${ARGS[@]}"} --csv="$P/tric_norms.csv"
if python3 -c "import triton, torch" >/dev/null 2>&1; then
    step "Triton + torch: triton_norms.py" triton_norms.log env PYTHONUNBUFFERED=1 python3 scripts/triton_norms.py \
        ${TRITON_ARGS[@]+"${TRITON_ARGS[@]}"} --csv="$P/triton_norms.csv"
else
    echo "== Triton skipped (python3 cannot import triton and torch)"
    status=1
fi
echo "== report"
python3 scripts/norms_merge.py "$P"/tric_norms.csv "$P"/triton_norms.csv --md "$P/norms_table.md"
rm -rf "$TRIC_CACHE_DIR" "$TRITON_CACHE_DIR"
exit $status
