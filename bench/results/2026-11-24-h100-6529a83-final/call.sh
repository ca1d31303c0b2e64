#!/usr/bin/env bash
# Session 14, call 9 (the build of 5b65198, the session's last kernel and heuristic change):
# every GPU test (8 shards), then the Python package's GPU tests, example and host overhead.
set -uo pipefail
SECONDS=0
GPU_TEST_SHARDS=8 BUILD_DIR=build-device timeout 300 scripts/gpu-run.sh gpu-tests > $OUT/gpu-run.txt 2>&1
echo "gpu-tests exit $? at ${SECONDS}s" >> $OUT/gpu-run.txt; grep -E "^shard|exit" $OUT/gpu-run.txt
BUILD_DIR=build-device timeout $((590 - SECONDS)) scripts/gpu-run.sh python > $OUT/gpu-run-python.txt 2>&1
echo "python exit $? at ${SECONDS}s" >> $OUT/gpu-run-python.txt; tail -6 $OUT/gpu-run-python.txt
