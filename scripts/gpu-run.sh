#!/usr/bin/env bash
# On the GPU machine: builds nothing (the build folder travels with the call), runs every GPU
# test, the CPU tests there too, the C embedding example, the Python package's GPU tests, the
# compute-sanitizer matrix and the benchmark, and writes logs under $OUT (one a step; one a shard).
#   usage: scripts/gpu-run.sh [tests|gpu-tests|python|sanitize|bench|all]   (default all)
#          GPU_TEST_SHARDS=8 scripts/gpu-run.sh tests   the GPU suite as 8 processes at once
#          (GPU_TEST_FILTER='...' narrows it): about 15 minutes on one process, compile-bound
#          (3 minutes in 8 shards); `tests` then runs the CPU suite and the C example there too,
#          `gpu-tests` only the GPU suite (one log, gpu-tests.txt, the shards' logs one after another)
set -uo pipefail
cd "$(dirname "$0")/.."
build="${BUILD_DIR:-build}"
out="${OUT:-/tmp/normjit-out}"
mkdir -p "$out"
what="${1:-all}"
export NORMJIT_CACHE_DIR="$(mktemp -d)"
scripts/gpu-environment.sh "$build" | tee "$out/environment.txt"
status=0
if [ "$what" = all ] || [ "$what" = tests ] || [ "$what" = gpu-tests ]; then
  # GPU_TEST_SHARDS=K runs the suite as K gtest shards at once (GTEST_TOTAL_SHARDS): its time
  # is mostly NVRTC on one host thread per process, and the shards share the kernel cache
  # directory, which many processes may use at once (docs/RELIABILITY.md). One log per shard.
  shards="${GPU_TEST_SHARDS:-1}"
  if [ "$shards" -le 1 ]; then
    "$build/tests/normjit_gpu_tests" ${GPU_TEST_FILTER:+--gtest_filter="$GPU_TEST_FILTER"} 2>&1 | tee "$out/gpu-tests.txt" | grep -E "^\[  (FAILED|PASSED|SKIPPED) |^normjit GPU|tests? (ran|skipped)|FAILED" | head -80
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
  else
    pids=()
    # One file: the device tool brings back only a few files a call. Also when a timeout stops
    # the run (TERM): the shards' logs so far, rather than one file a shard, most left behind.
    merge_shards() {
      for ((i = 0; i < shards; ++i)); do echo "== shard $i"; cat "$out/gpu-tests-shard$i.txt" 2>/dev/null; done > "$out/gpu-tests.txt"
      rm -f "$out"/gpu-tests-shard*.txt
    }
    trap 'kill "${pids[@]}" 2>/dev/null; merge_shards; echo "gpu-run.sh: stopped before the shards finished" >&2; exit 124' TERM INT
    for ((i = 0; i < shards; ++i)); do
      GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i "$build/tests/normjit_gpu_tests" ${GPU_TEST_FILTER:+--gtest_filter="$GPU_TEST_FILTER"} \
        > "$out/gpu-tests-shard$i.txt" 2>&1 &
      pids+=($!)
    done
    for ((i = 0; i < shards; ++i)); do
      wait "${pids[$i]}" || status=1
      echo "shard $i: $(grep -E "^\[  (PASSED|FAILED) " "$out/gpu-tests-shard$i.txt" | tr '\n' ' ')"
    done
    trap - TERM INT
    merge_shards
  fi
fi
if [ "$what" = all ] || [ "$what" = tests ]; then
  # The CPU tests that run the normjit command find it at the path it was built at, which a
  # build folder carried to this machine is not: NORMJIT_CLI and NORMJIT_LIBRARY say where they are now.
  build_path="$(cd "$build" && pwd)"
  NORMJIT_CLI="$build_path/normjit" NORMJIT_LIBRARY="$build_path/libnormjit.so" \
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
