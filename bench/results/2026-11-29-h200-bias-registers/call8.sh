#!/usr/bin/env bash
# Session 43, call 8 (H200): build-device = the commit of this script (kernels as calls 3-7').
# compute-sanitizer memcheck and synccheck over ForwardTuning.PhasedRowsMatchTheReference: the
# phased forward blocks, now with the rule's own LayerNorm blocks at 7001-11001 (the unprefetched
# four-slot blocks of 7163-10233 are new to the rules). scripts/gpu-sanitize.sh's matrix is the
# backward's, whose kernels did not change this session.
set -uo pipefail
B=build-device
s=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tool in memcheck synccheck; do
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 100 $s --tool $tool --error-exitcode 9 $B/tests/normjit_gpu_tests \
    --gtest_filter='ForwardTuning.PhasedRowsMatchTheReference' > $OUT/$tool.txt 2>&1
  echo "$tool exit $? at $SECONDS s"; grep -E "ERROR SUMMARY|PASSED|FAILED|OK \]" $OUT/$tool.txt | head -5
done
