#!/usr/bin/env bash
# scripts/seed2_configs.sh [BUILD_DIR] [SIZES]: run ON the GPU machine. Seed 2's kernel_matmul,
# each of the 13 configs of issue 8's list, tric (bench/bench_matmul --do-bench) beside Triton
# (scripts/triton_seed2_configs.py) timed the same way (as triton.testing.do_bench: L2 flushed
# before each launch, ~100 ms of launches, the median, TRIC_BENCH_REST_MS of rest before each
# config) on the same data, twice: A and B uniform in [-1, 1) and in [0, 1) (the seed's
# torch.rand); the H100 runs at its power limit here, and signed data draws more power (Triton
# at 4096: about 650 against 680 TFLOPS), so both sides get the same. Then cuBLAS
# (bench_seed2_report --no-tric, [0, 1) data). Prints the best config of each side and the ratio
# per size (scripts/seed2_configs_table.py); the raw lines go to $OUT (else ./seed2-configs).
set -u
B=${1:-.carry/gpu}
S=${2:-1024,2048,3072,4096,6144,8192}
P=${OUT:-$PWD/seed2-configs}
mkdir -p "$P"
export TRIC_BENCH_REST_MS=${TRIC_BENCH_REST_MS:-300}
export TRIC_EXAMPLES_DIR="$PWD/examples"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null
for d in signed rand; do
    "$B/bench/bench_matmul" ${S//,/ } --seed-configs --kernel=seed2 --all --do-bench --no-check \
        --inputs=$d > "$P/tric_$d.txt" 2>&1 || echo "bench_matmul ($d): exit $?"
    python3 scripts/triton_seed2_configs.py "$S" --inputs=$d > "$P/triton_$d.txt" 2>&1 ||
        echo "triton_seed2_configs.py ($d): exit $?"
done
"$B/bench/bench_seed2_report" --sizes="$S" --no-tric > "$P/cublas.txt" 2>&1 || echo "cuBLAS: exit $?"
python3 scripts/seed2_configs_table.py "$P"
