#!/usr/bin/env bash
# Session 10, call 4: the forward's fused options with the reference fixed (it normalised h
# before rounding it), twice (fresh inputs each), and memcheck over them.
set -uo pipefail
b=build-device; o=$OUT
scripts/gpu-environment.sh $b > $o/environment.txt 2>&1
export NORMJIT_CACHE_DIR=$(mktemp -d)
t=$b/tests/normjit_gpu_tests
timeout 120 $t --gtest_filter='ForwardFused.*:Forward.*' > $o/forward-fused.txt 2>&1; echo "exit $?" >> $o/forward-fused.txt
timeout 100 $t --gtest_filter='ForwardFused.*' > $o/forward-fused-again.txt 2>&1; echo "exit $?" >> $o/forward-fused-again.txt
timeout 150 compute-sanitizer --tool memcheck --error-exitcode 3 $t --gtest_filter='ForwardFused.*' > $o/memcheck-forward-fused.txt 2>&1; echo "exit $?" >> $o/memcheck-forward-fused.txt
timeout 150 compute-sanitizer --tool racecheck --error-exitcode 3 $t --gtest_filter='ForwardFused.TheDropout*' > $o/racecheck-forward-fused.txt 2>&1; echo "exit $?" >> $o/racecheck-forward-fused.txt
tail -n 4 $o/*.txt
