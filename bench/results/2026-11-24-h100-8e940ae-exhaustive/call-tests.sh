#!/usr/bin/env bash
# Session 12, call 8 (8e940ae): the tuner's GPU tests (Tuning*, ForwardTuning*) on the final tuner.
set -uo pipefail
b=build-device; o=$OUT
export NORMJIT_CACHE_DIR=$(mktemp -d)
timeout 300 $b/tests/normjit_gpu_tests --gtest_filter='Tuning*:ForwardTuning*:*Tuner*' > $o/gpu-tests-tuning.txt 2>&1
echo "exit $?" >> $o/gpu-tests-tuning.txt
grep -E "^\[  (FAILED|PASSED) |^\[       OK|^exit" $o/gpu-tests-tuning.txt
