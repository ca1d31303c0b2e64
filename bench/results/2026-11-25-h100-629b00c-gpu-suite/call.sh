#!/usr/bin/env bash
# Session 20, call 12: every GPU test with the build of 629b00c, whose kernels and heuristics are
# the session's last (6a9c01e and after changed comments, CPU tests and docs only).
set -uo pipefail
b=build-device; o=$OUT
GPU_TEST_SHARDS=12 BUILD_DIR=$b scripts/gpu-run.sh gpu-tests > $o/gpu-run.txt 2>&1; echo "gpu tests exit $? at ${SECONDS}s"
grep -E "^shard" $o/gpu-run.txt
gzip -f $o/gpu-tests.txt
