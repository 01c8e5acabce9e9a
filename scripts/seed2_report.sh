#!/usr/bin/env bash
# scripts/seed2_report.sh [--quick] [--sizes=A,B,...] [--groups=0,8,16] [--triton-groups=8]
#     [--no-torch] [--tag=NAME] [--no-triton] [--stream-k=auto|on] [--deep-pipeline=auto]
#     [BUILD_DIR]: seed 2's report
# (its author's TFLOPS sweep, M = N = K = 1024 i for i = 1..32, kernel_matmul autotuned with
# GROUP_SIZE_M 0, 8, 16, beside cuBLAS and Triton), run ON the GPU machine from the repo root with
# the packed build (default .carry/gpu: scripts/gpu-pack.sh).
#   1. BUILD_DIR/bench/bench_seed2_report: tric (tric_gm_0/8/16) and cuBLAS -> tric_seed2_TAG.csv
#   2. python3 scripts/triton_seed2_report.py: Triton (triton_gm_0/8/16) and torch.matmul
#      -> triton_seed2_TAG.csv (skipped when python3 cannot import triton and torch)
#   3. python3 scripts/seed2_report.py: every tric_seed2_*.csv and triton_seed2_*.csv in the output
#      folder -> seed2_table.md (printed) and seed2_tflops.png (when matplotlib is there)
# Everything goes under $OUT when OUT is set (else ./seed2-out), with one .log per step.
# --quick: 1024, 4096, 8192 (about 100 s on an H100). The whole sweep does not fit one 10-minute
# GPU call (32 sizes, 16 configs tuned per GROUP_SIZE_M on both sides, up to 32768^3; 32768 alone
# takes about 230 s on an H100: tric + cuBLAS 80 s, Triton + torch 150 s, so about 40 minutes in
# all): split it with --sizes into calls of 1024 i for i in 1-12, 13-20, 21-24, 25-27, 28-29,
# 30-31 and 32 (each about 4 to 7 minutes), then merge the CSVs:
#   python3 scripts/seed2_report.py DIR*/tric_seed2_*.csv DIR*/triton_seed2_*.csv --png seed2.png --md seed2.md
# --triton-groups: Triton's GROUP_SIZE_M values when they differ from --groups (its autotuner is
# the slow part of the sweep: the issue asks for one Triton line); --no-torch: no torch.matmul line.
# --stream-k=auto: tric tunes each config as written and with stream_k (lines tric_sk_gm_*).
# --deep-pipeline=auto: and with more stages, as many as fit up to twice its own (lines
# tric_dp_gm_*).
# TAG (default: quick, all, or FIRST-LAST of --sizes) names a run's CSVs so runs merge without
# clobbering each other.
# TRIC_BENCH_REST_MS (environment, default 1000, as scripts/gpu_perf.sh): the GPU idles that long
# before every timed measurement, tric's, cuBLAS's and Triton's alike.
# Exit status: 1 when a step could not run at all; a failed check only warns (see its log).
set -u
export TRIC_BENCH_REST_MS=${TRIC_BENCH_REST_MS:-1000}
B=.carry/gpu
ARGS=()
TRIC_ARGS=()
TRITON_ARGS=()
TAG=
TRITON=1
for a in "$@"; do
    case $a in
        --quick) ARGS+=(--quick); TAG=${TAG:-quick} ;;
        --sizes=*) ARGS+=("$a"); s=${a#--sizes=}; TAG=${TAG:-${s%%,*}-${s##*,}} ;;
        --groups=*) ARGS+=("$a") ;;
        --triton-groups=*) TRITON_ARGS+=("--groups=${a#--triton-groups=}") ;;
        --no-torch) TRITON_ARGS+=(--no-torch) ;;
        --tag=*) TAG=${a#--tag=} ;;
        --no-triton) TRITON=0 ;;
        --stream-k=*|--deep-pipeline=auto) TRIC_ARGS+=("$a") ;;
        -h|--help) sed -n '2,25p' "$0"; exit 0 ;;
        -*) echo "seed2_report.sh: unknown option $a" >&2; exit 2 ;;
        *) B=$a ;;
    esac
done
TAG=${TAG:-all}
if [ ! -x "$B/bench/bench_seed2_report" ]; then
    echo "seed2_report.sh: $B/bench/bench_seed2_report not found (build it, run scripts/gpu-pack.sh BUILD on the build machine and carry .carry/gpu)" >&2
    exit 2
fi
P=${OUT:-$PWD/seed2-out}
mkdir -p "$P"
export TRIC_EXAMPLES_DIR="$PWD/examples"
# Fresh compile caches (outside $P: they are not results), so the first launch at the first size
# compiles every config on both sides, and tric's tuning is not read back from an earlier run.
TRIC_CACHE_DIR=$(mktemp -d "${TMPDIR:-/tmp}/tric-cache.XXXXXX")
TRITON_CACHE_DIR=$(mktemp -d "${TMPDIR:-/tmp}/triton-cache.XXXXXX")
export TRIC_CACHE_DIR TRITON_CACHE_DIR
# libcublas for bench_seed2_report's dlopen: the CUDA toolkit's, and the pip wheel torch loads.
for d in /usr/local/cuda/lib64 \
    "$(python3 -c 'import os, nvidia.cublas as m; print(os.path.join(list(m.__path__)[0], "lib"))' 2>/dev/null)"; do
    [ -n "$d" ] && [ -d "$d" ] && LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}
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

nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv 2>/dev/null \
    | tee "$P/gpu_$TAG.txt"
step "tric + cuBLAS: bench_seed2_report" "tric_seed2_$TAG.log" \
    "$B/bench/bench_seed2_report" ${ARGS[@]+"${ARGS[@]}"} ${TRIC_ARGS[@]+"${TRIC_ARGS[@]}"} \
    --csv="$P/tric_seed2_$TAG.csv"
if [ $TRITON = 1 ] && python3 -c "import triton, torch" >/dev/null 2>&1; then
    step "Triton + torch: triton_seed2_report.py" "triton_seed2_$TAG.log" \
        env PYTHONUNBUFFERED=1 python3 scripts/triton_seed2_report.py \
        --seed2-report-csv "$P/triton_seed2_$TAG.csv" ${ARGS[@]+"${ARGS[@]}"} \
        ${TRITON_ARGS[@]+"${TRITON_ARGS[@]}"}
else
    echo "== Triton skipped (--no-triton, or python3 cannot import triton and torch)"
fi
echo "== report (every tric_seed2_*.csv and triton_seed2_*.csv in $P)"
python3 scripts/seed2_report.py "$P"/tric_seed2_*.csv "$P"/triton_seed2_*.csv \
    --png "$P/seed2_tflops.png" --md "$P/seed2_table.md" 2>&1 | tee "$P/seed2_report.log"
rm -rf "$TRIC_CACHE_DIR" "$TRITON_CACHE_DIR"
exit $status
