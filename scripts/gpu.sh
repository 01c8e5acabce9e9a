#!/usr/bin/env bash
# scripts/gpu.sh [BUILD_DIR]: run ON the GPU machine, from the repo root, with a build directory
# made on the build machine and carried over (default build-gpu). Runs the gpu-labelled tests, the
# example programs on cuda:0, the benchmarks and the codegen GPU-vs-interpreter diff, then the
# peers (Triton, torch/cuBLAS) in the same run; prints tric's numbers and theirs. Exit status: 0 when every
# test and example passed (benchmarks only report). TRIC_GPU_BENCH=0 skips the benchmarks and
# TRIC_PEERS=0 the peers (a correctness-only run).
#
# The build's absolute paths (TRIC_EXAMPLES_DIR, ctest's files) belong to the build machine: the
# programs fall back to ./examples, and when ctest is missing or its files point elsewhere the test
# binaries are run directly (exit 77 = skipped).
set -u
B=${1:-build-gpu}
if [ ! -f "$B/libtric_internal.so" ]; then
    echo "gpu.sh: $B/libtric_internal.so not found (build with cmake -B $B first, then carry $B)" >&2
    exit 2
fi
export TRIC_EXAMPLES_DIR="$PWD/examples"
export TRIC_DEVICE=cuda:0
status=0

echo "== gpu tests"
ran_ctest=0
if command -v ctest >/dev/null 2>&1 && grep -qs "$PWD" "$B/CTestTestfile.cmake"; then
    ctest --test-dir "$B" -L gpu --output-on-failure || status=1
    ran_ctest=1
fi
if [ $ran_ctest = 0 ]; then
    for t in "$B"/tests/gpu_*; do
        [ -x "$t" ] || continue
        echo "-- $(basename "$t")"
        "$t"
        rc=$?
        case $rc in
            0) echo "   PASS" ;;
            77) echo "   SKIPPED" ;;
            *) echo "   FAIL (exit $rc)"; status=1 ;;
        esac
    done
fi

echo "== examples"
for cmd in "vector_add" "vector_add 1" "vector_add_aot" "vector_add 268435456" "matmul" "matmul 1000 77 1024" "matmul 1024 1024 1024"; do
    echo "-- $cmd"
    # shellcheck disable=SC2086
    "$B"/$cmd || { echo "   FAIL: $cmd"; status=1; }
done

if [ "${TRIC_GPU_BENCH:-1}" = 0 ]; then
    echo "== benchmarks skipped (TRIC_GPU_BENCH=0)"
fi
[ "${TRIC_GPU_BENCH:-1}" = 0 ] || echo "== benchmarks (tric)"
[ "${TRIC_GPU_BENCH:-1}" = 0 ] || for bench in bench_launch bench_vector_add bench_matmul bench_linear bench_autotune; do
    if [ -x "$B/bench/$bench" ]; then
        echo "-- $bench"
        "$B/bench/$bench" || echo "   ($bench exited $?)"
    else
        echo "-- $bench: not built ($B/bench/$bench missing)"
    fi
done
if [ -x "$B/tests/unit_codegen_gpu_diff" ]; then
    echo "== codegen: every test kernel on the GPU against the interpreter"
    "$B/tests/unit_codegen_gpu_diff" || { echo "   FAIL: unit_codegen_gpu_diff"; status=1; }
fi
if [ -x "$B/tests/unit_codegen_gpu_random" ]; then
    echo "== codegen: kernels made up from seeds on the GPU against the interpreter"
    "$B/tests/unit_codegen_gpu_random" || { echo "   FAIL: unit_codegen_gpu_random"; status=1; }
fi

# The peers, in the same run so the ratios compare like with like (METHOD.md): Triton 3.6 and
# torch/cuBLAS, timed as ../shared/bench/triton_anchor.py does (a copy travels in scripts/).
if [ "${TRIC_PEERS:-1}" = 1 ] && python3 -c "import triton, torch" >/dev/null 2>&1; then
    echo "== peers: Triton and torch/cuBLAS on this GPU, this run"
    PYTHONUNBUFFERED=1 python3 scripts/triton_anchor.py --quick 2>&1 | grep -v '^{' || true
fi
exit $status
