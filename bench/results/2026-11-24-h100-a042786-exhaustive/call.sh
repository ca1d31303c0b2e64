#!/usr/bin/env bash
# Session 12, call 10 (a042786): BackwardMerge (fixed test: merged twins at 37 and 199 rows) and
# the other merge/launch-plan tests; then the whole sweep tuned and exhaustively in one run,
# cold, differing picks re-timed side by side in three sessions (median ratio), after the
# balanced row groups of dba10c0.
set -uo pipefail
b=build-device; o=$OUT
scripts/gpu-environment.sh $b > $o/environment.txt 2>&1
export NORMJIT_CACHE_DIR=$(mktemp -d)
timeout 120 $b/tests/normjit_gpu_tests --gtest_filter='BackwardMerge.*:BackwardSmMargin.*:*Determin*' > $o/gpu-tests-merge.txt 2>&1
echo "exit $?" >> $o/gpu-tests-merge.txt
grep -E "^\[  (FAILED|PASSED) |^\[       OK|^exit" $o/gpu-tests-merge.txt
export NORMJIT_CACHE_DIR=$(mktemp -d)
timeout 440 $b/normjit tune --exhaustive --shapes bench/tune-sweep.toml 2>/dev/null > $o/tune-sweep-exhaustive.txt
echo "exit $?" >> $o/tune-sweep-exhaustive.txt
grep -E "^(layer|rms)" $o/tune-sweep-exhaustive.txt | wc -l; tail -n 1 $o/tune-sweep-exhaustive.txt
