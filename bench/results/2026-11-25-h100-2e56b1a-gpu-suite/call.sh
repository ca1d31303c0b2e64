#!/usr/bin/env bash
# Session 21, call 7 (2e56b1a): every GPU test at the session's last kernels and heuristics.
set -uo pipefail
b=build-device; o=$OUT
GPU_TEST_SHARDS=12 BUILD_DIR=$b timeout 340 scripts/gpu-run.sh gpu-tests > $o/gpu-run.txt 2>&1; echo "gpu tests exit $? at ${SECONDS}s"
grep -E "^shard|FAILED" $o/gpu-run.txt | head -40
gzip -f $o/gpu-tests.txt
