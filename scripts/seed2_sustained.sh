#!/usr/bin/env bash
# scripts/seed2_sustained.sh [BUILD_DIR] [SIZE] [CONFIG] [N]: run ON the GPU machine. Seed 2's
# kernel_matmul in the sustained regime: tric (bench/bench_matmul --reps=N, back to back, no L2
# flush), then Triton and then cuBLAS (torch.matmul; both scripts/triton_seed2_sustained.py) each
# launched N times on [0, 1) data, twice, with nvidia-smi sampling the SM clock and the board power every 50 ms meanwhile. Prints
# each side's TFLOPS and, over the samples above 200 W (the run, not the idle gaps), the median
# clock and power. do_bench's bursts (scripts/seed2_configs.sh) start each config rested, at boost
# clock; a long training or inference run lives here instead, at the power limit. Defaults:
# .carry/gpu, 4096, 128x256x64,8,3, 15000 launches (about 3.5 s a side). Samples go to $OUT (else
# ./seed2-sustained).
set -u
B=${1:-.carry/gpu}
S=${2:-4096}
C=${3:-128x256x64,8,3}
N=${4:-15000}
P=${OUT:-$PWD/seed2-sustained}
mkdir -p "$P"
export TRIC_EXAMPLES_DIR="$PWD/examples"
nvidia-smi --query-gpu=name,driver_version,power.limit --format=csv,noheader 2>/dev/null
sample() { nvidia-smi --query-gpu=clocks.sm,power.draw --format=csv,noheader,nounits -lms 50 >"$P/clock_$1.txt" & echo $!; }
summary() {
    python3 - "$1" <<'PY'
import statistics, sys
rows = [l.split(",") for l in open(sys.argv[1]) if l.strip()]
busy = [(float(c), float(p)) for c, p in rows if float(p) > 200]
if busy:
    print("clock median %.0f MHz, power median %.0f W (%d samples)" % (
        statistics.median(c for c, _ in busy), statistics.median(p for _, p in busy), len(busy)))
else:
    print("no sample above 200 W")
PY
}
for r in 1 2; do
    pid=$(sample tric$r)
    line=$("$B/bench/bench_matmul" "$S" --config "$C" --kernel=seed2 --reps="$N" --no-check --inputs=rand 2>&1 | grep kernel_matmul)
    kill "$pid"; sleep 3
    echo "tric   round $r: $line | $(summary "$P/clock_tric$r.txt")"
    pid=$(sample triton$r)
    line=$(python3 scripts/triton_seed2_sustained.py "$S" "$N" "$C" 2>&1 | tail -1)
    kill "$pid"; sleep 3
    echo "triton round $r: $line | $(summary "$P/clock_triton$r.txt")"
    pid=$(sample cublas$r)
    line=$(python3 scripts/triton_seed2_sustained.py "$S" "$N" cublas 2>&1 | tail -1)
    kill "$pid"; sleep 3
    echo "cublas round $r: $line | $(summary "$P/clock_cublas$r.txt")"
done
