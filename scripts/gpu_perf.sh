#!/usr/bin/env bash
# scripts/gpu_perf.sh [--quick] [BUILD_DIR]: the performance comparison, run ON the GPU machine
# from the repo root with the packed build (default .carry/gpu, made on the build machine by
# scripts/gpu-pack.sh): tric against Triton and torch/cuBLAS, all in the same run.
#   1. bench_matmul --seed-configs --kernel=both --reps=40 at M = N = K 1024 2048 3072 4096 6144 8192
#      (--quick: 4096 8192), every config's time in the CSV (--all);
#   2. the same for seed 2 with --arch=sm_80 (cp.async + ldmatrix + mma.sync) at 4096;
#   3. bench_linear (fp16/bf16, x row- and column-major, 4096 8192 :16 and 4100 open), then the
#      same with --plain-signature (no hints; tric_launch specializes);
#   4. python3 scripts/triton_anchor.py --matmul-only --sizes=... (Triton's autotuned seed 2 and
#      torch.matmul) and python3 scripts/triton_linear.py (Triton's linear_kernel and cuBLAS);
#   5. scripts/perf_table.py: the tric / Triton / cuBLAS table (and a PNG chart if matplotlib).
# Everything goes under $OUT when OUT is set (else ./perf-out): tric_matmul.csv,
# tric_matmul_sm80.csv, tric_linear.csv, tric_linear_plain.csv, triton_linear.csv, anchors.json, one .log per step,
# perf_table.txt, perf_seed2.png. The final table is printed last. Exit status 0 unless a step
# could not run at all (benchmarks' correctness failures are reported in the logs and the table).
# LINEAR_CONFIGS="128x128x64,4,4 128x256x64,8,3" (environment): the configs both linear benchmarks
# try (default 128x128x64, 4 warps, 4 stages).
# TRIC_BENCH_REST_MS (environment, default 1000): the GPU idles that long before every timed
# config, tric's and Triton's alike (a kernel timed right after seconds of full load runs slower:
# docs/performance.md); 0 times them back to back.
set -u
export TRIC_BENCH_REST_MS=${TRIC_BENCH_REST_MS:-1000}
QUICK=0
B=.carry/gpu
for a in "$@"; do
    case $a in
        --quick) QUICK=1 ;;
        -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
        *) B=$a ;;
    esac
done
if [ ! -x "$B/bench/bench_matmul" ]; then
    echo "gpu_perf.sh: $B/bench/bench_matmul not found (run scripts/gpu-pack.sh BUILD on the build machine and carry .carry/gpu)" >&2
    exit 2
fi
P=${OUT:-$PWD/perf-out}
mkdir -p "$P"
export TRIC_EXAMPLES_DIR="$PWD/examples"
# A fresh PTX cache per run (outside $P: it is not a result), so every config is compiled by
# this build.
TRIC_CACHE_DIR=$(mktemp -d "${TMPDIR:-/tmp}/tric-cache.XXXXXX")
export TRIC_CACHE_DIR
if [ $QUICK = 1 ]; then
    SIZES="4096 8192"
else
    SIZES="1024 2048 3072 4096 6144 8192"
fi
SIZES_COMMA=$(echo "$SIZES" | tr ' ' ',')
status=0

step() { # step NAME LOGFILE CMD...: runs CMD, output to the terminal and LOGFILE
    local name=$1 log=$2
    shift 2
    echo "== $name"
    echo "   \$ $*"
    local t0=$SECONDS
    "$@" 2>&1 | tee "$P/$log"
    local rc=${PIPESTATUS[0]}
    echo "   ($name: exit $rc, $((SECONDS - t0)) s)"
    case $rc in 0) ;; 1) echo "   WARNING: $name reported a failure (see $P/$log)" ;; *) status=1 ;; esac
}

# shellcheck disable=SC2086
step "tric: bench_matmul, seed configs, both kernels" tric_matmul.log \
    "$B/bench/bench_matmul" $SIZES --seed-configs --kernel=both --all --reps=40 --csv="$P/tric_matmul.csv"
step "tric: bench_matmul seed 2 on sm_80 (mma.sync) at 4096" tric_matmul_sm80.log \
    "$B/bench/bench_matmul" 4096 --seed-configs --kernel=seed2 --arch=sm_80 --all \
    --csv="$P/tric_matmul_sm80.csv"
# LINEAR_CONFIGS="128x128x64,4,4 128x256x64,8,3 ...": configs for both linear benchmarks (the
# same list to tric and Triton; default 128x128x64, 4 warps, 4 stages).
LIN_ARGS=()
for c in ${LINEAR_CONFIGS:-}; do LIN_ARGS+=(--config "$c"); done
step "tric: bench_linear" tric_linear.log \
    "$B/bench/bench_linear" ${LIN_ARGS[@]+"${LIN_ARGS[@]}"} --all --reps=40 --csv="$P/tric_linear.csv"
# The same kernel compiled with no hints at all: each launch runs the variant tric_launch
# specializes on its values, which must time as the ideal signature does.
step "tric: bench_linear, no signature hints (launch specialization)" tric_linear_plain.log \
    "$B/bench/bench_linear" ${LIN_ARGS[@]+"${LIN_ARGS[@]}"} --plain-signature --all --reps=40 \
    --csv="$P/tric_linear_plain.csv"

if python3 -c "import triton, torch" >/dev/null 2>&1; then
    step "triton + torch: seed 2 autotuned matmul (triton_anchor.py)" triton_anchor.log \
        env OUT="$P" PYTHONUNBUFFERED=1 python3 scripts/triton_anchor.py --matmul-only \
        --sizes="$SIZES_COMMA"
    step "triton + cuBLAS: linear (triton_linear.py)" triton_linear.log \
        env PYTHONUNBUFFERED=1 python3 scripts/triton_linear.py ${LIN_ARGS[@]+"${LIN_ARGS[@]}"} --all \
        --csv="$P/triton_linear.csv"
else
    echo "== peers skipped: python3 cannot import triton and torch"
fi

echo "== comparison (tric vs Triton vs cuBLAS, this run)"
python3 scripts/perf_table.py "$P" --png="$P/perf_seed2.png" | tee "$P/perf_table.txt"
exit $status
