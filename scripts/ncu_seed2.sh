#!/usr/bin/env bash
# scripts/ncu_seed2.sh [BUILD_DIR] [SIZE] [CONFIG]: run ON the GPU machine. Hardware counters of
# seed 2's kernel_matmul at M = N = K = SIZE (default 4096), one config (default 128x256x64,8,3 as
# bench_matmul spells it), GROUP_SIZE_M 8, fp16 in and out: tric's (bench/bench_matmul) and
# Triton's (scripts/triton_seed2_report.py's kernel), one launch each after warm-up, through
# `ncu --clock-control none` (the clocks are never touched). Triton's PTX and SASS go to $OUT (or
# ./ncu-out) for reading beside tric's. NCU_EXTRA_METRICS (comma-separated ncu metric names) adds
# counters to the default list.
set -u
B=${1:-.carry/gpu}
SIZE=${2:-4096}
CFG=${3:-128x256x64,8,3}
OUTDIR=${OUT:-./ncu-out}
mkdir -p "$OUTDIR"
NCU=/usr/local/cuda/bin/ncu
SECTIONS="--section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats \
 --section SchedulerStats --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis"
METRICS="--metrics l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,smsp__inst_executed.sum,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active${NCU_EXTRA_METRICS:+,$NCU_EXTRA_METRICS}"
IFS='x,' read -r BM BN BK W S <<<"$CFG"
echo "== tric: kernel_matmul $SIZE^3, $CFG"
# shellcheck disable=SC2086
$NCU --clock-control none -k regex:kernel_matmul --launch-skip 4 --launch-count 1 $SECTIONS $METRICS \
    "$B/bench/bench_matmul" "$SIZE" --kernel=seed2 --config "$CFG" --no-check --reps=3 2>&1 | grep -v "^==PROF=="
echo "== Triton: kernel_matmul $SIZE^3, BLOCK ${BM}x${BN}x${BK}, num_warps $W, num_stages $S"
cat > "$OUTDIR/triton_one.py" <<PY
import sys
sys.path.insert(0, "scripts")
import torch, triton, triton.language as tl
from triton_seed2_report import kernel_matmul
M = N = K = $SIZE
a = torch.randn(M, K, device="cuda", dtype=torch.float16)
b = torch.randn(K, N, device="cuda", dtype=torch.float16)
c = torch.empty(M, N, device="cuda", dtype=torch.float16)
grid = (triton.cdiv(M, $BM) * triton.cdiv(N, $BN),)
for _ in range(6):
    k = kernel_matmul[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                            c.stride(0), c.stride(1), BLOCK_SIZE_M=$BM, BLOCK_SIZE_N=$BN,
                            BLOCK_SIZE_K=$BK, GROUP_SIZE_M=8, T_C=tl.float16, T_ACC=tl.float32,
                            num_warps=$W, num_stages=$S)
torch.cuda.synchronize()
assert torch.allclose(c.float(), (a.float() @ b.float()), atol=1.0, rtol=0.05)
open("$OUTDIR/triton_kernel_matmul.ptx", "w").write(k.asm["ptx"])
try:
    open("$OUTDIR/triton_kernel_matmul.sass", "w").write(k.asm["sass"])
except Exception as e:
    print("no sass:", e)
PY
# shellcheck disable=SC2086
$NCU --clock-control none -k regex:kernel_matmul --launch-skip 4 --launch-count 1 $SECTIONS $METRICS \
    python3 "$OUTDIR/triton_one.py" 2>&1 | grep -v "^==PROF=="
