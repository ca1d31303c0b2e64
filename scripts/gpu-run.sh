#!/usr/bin/env bash
# On the GPU machine: builds nothing (the build folder travels with the call), runs every GPU
# test, the CPU tests there too, the C embedding example, the Python package's GPU tests, the
# compute-sanitizer matrix and the benchmark, and writes logs under $OUT (8 files at most).
#   usage: scripts/gpu-run.sh [tests|python|sanitize|bench|all]   (default all)
set -uo pipefail
cd "$(dirname "$0")/.."
build="${BUILD_DIR:-build}"
out="${OUT:-/tmp/normjit-out}"
mkdir -p "$out"
what="${1:-all}"
export NORMJIT_CACHE_DIR="$(mktemp -d)"
scripts/gpu-environment.sh "$build" | tee "$out/environment.txt"
status=0
if [ "$what" = all ] || [ "$what" = tests ]; then
  "$build/tests/normjit_gpu_tests" 2>&1 | tee "$out/gpu-tests.txt" | grep -E "^\[  (FAILED|PASSED|SKIPPED) |^normjit GPU|tests? (ran|skipped)|FAILED" | head -80
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
  "$build/tests/normjit_cpu_tests" > "$out/cpu-tests.txt" 2>&1 || status=1
  tail -3 "$out/cpu-tests.txt"
  BUILD_DIR="$build" OUT="$out" examples/embed_c/run-on-gpu.sh > /dev/null 2>&1 || status=1
  tail -2 "$out/embed_c.txt"
fi
if [ "$what" = all ] || [ "$what" = python ]; then
  BUILD_DIR="$build" OUT="$out" scripts/gpu-python.sh > /dev/null 2>&1 || status=1
  grep -E "^python:|curves|gpu-python.sh: exit" "$out/python.txt"
fi
if [ "$what" = all ] || [ "$what" = sanitize ]; then
  BUILD_DIR="$build" OUT="$out" scripts/gpu-sanitize.sh > /dev/null 2>&1 || status=1
  grep -E "^sanitize:" "$out/sanitize.txt"
fi
if [ "$what" = all ] || [ "$what" = bench ]; then
  "$build/normjit" bench ${BENCH_ARGS:---latency --graph} --json "$out/bench.json" 2>&1 | tee "$out/bench.txt" || status=1
fi
exit $status
