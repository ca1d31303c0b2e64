#!/usr/bin/env bash
# Session 23, call 4: at fbd800f (the fill rule with its fallback, warp-shifted moments beyond
# 512 threads), every GPU test, then the forward speed sweep (graph replays, JSON).
set -uo pipefail
b=build-device; o=$OUT
GPU_TEST_SHARDS=12 BUILD_DIR=$b OUT=$o/tests scripts/gpu-run.sh gpu-tests > $o/tests.txt 2>&1
echo "tests rc=$? at ${SECONDS}s"; grep -h "PASSED\|FAILED\|Failure" $o/tests/gpu-tests*.txt | sort | uniq -c
NORMJIT_CACHE_DIR=$(mktemp -d) timeout 200 $b/normjit bench --forward --graph --json $o/bench-forward.json > $o/bench-forward.txt 2>&1
echo "sweep rc=$? at ${SECONDS}s"
