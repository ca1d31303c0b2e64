#!/usr/bin/env bash
# Session 10, call 2, on f78a3fe: the forward's fused options on the GPU (ForwardFused.*), the
# plain forward tests again (its template changed), memcheck over the new kernels, then, with
# the time left, synccheck over the backward's fused tests (issue 7).
set -uo pipefail
b=build-device; o=$OUT
scripts/gpu-environment.sh $b > $o/environment.txt 2>&1
export NORMJIT_CACHE_DIR=$(mktemp -d)
t=$b/tests/normjit_gpu_tests
timeout 170 $t --gtest_filter='ForwardFused.*' > $o/forward-fused.txt 2>&1; echo "exit $?" >> $o/forward-fused.txt
timeout 150 $t --gtest_filter='Forward.*' > $o/forward.txt 2>&1; echo "exit $?" >> $o/forward.txt
timeout 150 compute-sanitizer --tool memcheck --error-exitcode 3 $t --gtest_filter='ForwardFused.*' > $o/memcheck-forward-fused.txt 2>&1; echo "exit $?" >> $o/memcheck-forward-fused.txt
left=$((560 - SECONDS))
if [ $left -gt 60 ]; then
  timeout $left compute-sanitizer --tool synccheck --error-exitcode 3 $t --gtest_filter='*BackwardFused*:EachOrder/BackwardGated.MatchesFloat64ReferenceOverTheIssuesShapes/*:BackwardParallel.*:BackwardRecompute.*:BackwardSmMargin.*' > $o/synccheck-backward-fused.txt 2>&1; echo "exit $? after ${left}s allowed" >> $o/synccheck-backward-fused.txt
fi
tail -3 $o/*.txt
