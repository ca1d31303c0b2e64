#!/usr/bin/env bash
# Session 15, review pass: every GPU test (8 shards) after the launch path's CUlaunchConfig
# became one helper (cluster, cooperative and the column pass's dependent launches).
set -uo pipefail
SECONDS=0
b=build-device; o=$OUT
GPU_TEST_SHARDS=8 BUILD_DIR=$b timeout 300 scripts/gpu-run.sh gpu-tests > $o/gpu-run.txt 2>&1
echo "gpu-tests exit $? at ${SECONDS}s" >> $o/gpu-run.txt; grep -E "^shard|exit" $o/gpu-run.txt
