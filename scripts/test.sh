#!/usr/bin/env bash
# Builds everything and runs every test: the normal build, the same tests under AddressSanitizer
# and UndefinedBehaviorSanitizer, and the fuzzers (front end, tile IR text, PTX metadata block) for
# a fixed time each on their seed corpora.
# GPU tests (label gpu) skip with a printed reason on machines without an NVIDIA driver.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
jobs=$(nproc 2>/dev/null || echo 2)

echo "== build (RelWithDebInfo, warnings are errors)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTRIC_WERROR=ON >/dev/null
cmake --build build -j"$jobs"
echo "== tests"
ctest --test-dir build --output-on-failure -j"$jobs"

echo "== build with ASan + UBSan"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DTRIC_SANITIZE=ON >/dev/null
cmake --build build-asan -j"$jobs"
echo "== tests under ASan + UBSan"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure -j"$jobs" -E 'bench'

echo "== fuzz the front end (${TRIC_FUZZ_SECONDS:-60} s)"
CC=clang-19 cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=Debug -DTRIC_FUZZ=ON \
  -DCMAKE_C_FLAGS="-fsanitize=fuzzer-no-link,address,undefined" >/dev/null
cmake --build build-fuzz -j"$jobs" --target tric-fuzz tric-fuzz-ir tric-fuzz-meta
mkdir -p build-fuzz/corpus build-fuzz/corpus_ir build-fuzz/corpus_meta
build-fuzz/tric-fuzz -max_total_time="${TRIC_FUZZ_SECONDS:-60}" -max_len=4096 -timeout=10 \
  -rss_limit_mb=2048 -print_final_stats=1 build-fuzz/corpus tests/fuzz/corpus examples 2>&1 | tail -15
echo "== fuzz the tile IR's text form (${TRIC_FUZZ_SECONDS:-60} s): parse, verify, print round trip"
build-fuzz/tric-fuzz-ir -max_total_time="${TRIC_FUZZ_SECONDS:-60}" -max_len=32768 -timeout=10 \
  -rss_limit_mb=2048 -print_final_stats=1 build-fuzz/corpus_ir tests/fuzz/corpus_ir tests/lit/ir \
  tests/lit/ir/Inputs 2>&1 | tail -8
echo "== fuzz the PTX metadata block (30 s): read, write, read round trip"
build-fuzz/tric-fuzz-meta -max_total_time=30 -max_len=8192 -timeout=10 -rss_limit_mb=2048 \
  -print_final_stats=1 build-fuzz/corpus_meta tests/fuzz/corpus_meta 2>&1 | tail -8

echo "== summary (the normal build's tests; skipped = GPU tests on a machine without a driver)"
summary=$(ctest --test-dir build -j"$jobs" 2>&1)
passed=$(printf '%s\n' "$summary" | grep -cE 'Test +#[0-9]+: .* Passed')
failed=$(printf '%s\n' "$summary" | grep -cE 'Test +#[0-9]+: .*(Failed|\*\*\*Exception|Timeout)' || true)
skipped=$(printf '%s\n' "$summary" | grep -cE 'Test +#[0-9]+: .*Skipped' || true)
printf '%s\n' "$summary" | grep -E '^[0-9]+% tests passed'
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
