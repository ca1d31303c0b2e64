#!/usr/bin/env bash
# Session 24, call 8: at eccefbb (NVRTC --no-cache for the report, D1's forward statistics
# helpers, γ in the grid cluster's shared memory), every GPU test, then the backward and the
# forward speed sweeps (graph replays, JSON).
set -uo pipefail
b=build-device; o=$OUT
GPU_TEST_SHARDS=12 BUILD_DIR=$b OUT=$o/tests scripts/gpu-run.sh gpu-tests > $o/tests.txt 2>&1
echo "tests rc=$? at ${SECONDS}s"; grep -h "PASSED\|FAILED\|Failure" $o/tests/gpu-tests*.txt | sort | uniq -c
gzip $o/tests/gpu-tests.txt
NORMJIT_CACHE_DIR=$(mktemp -d) timeout 240 $b/normjit bench --graph --json $o/bench.json > $o/bench.txt 2>&1
echo "backward sweep rc=$? at ${SECONDS}s"
NORMJIT_CACHE_DIR=$(mktemp -d) timeout 200 $b/normjit bench --forward --graph --json $o/bench-forward.json > $o/bench-forward.txt 2>&1
echo "forward sweep rc=$? at ${SECONDS}s"
head -1 $o/bench.txt; grep -E ' (262144|1048576|1048577) ' $o/bench.txt | cut -c1-150
