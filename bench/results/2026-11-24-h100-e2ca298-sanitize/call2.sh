#!/usr/bin/env bash
# Call E of session 9: what call D's time limits cut off, straight under compute-sanitizer (no
# warm-up run: the kernels compile under the tool). memcheck over the gated tests and the
# sanitize matrix; racecheck over the parallel, recompute and gated tests.
set -uo pipefail
b=build-device; o=$OUT
export NORMJIT_CACHE_DIR=$(mktemp -d)
scripts/gpu-environment.sh $b > $o/environment2.txt 2>&1; head -2 $o/environment2.txt
cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
export NORMJIT_TEST_MATRIX=sanitize
t0=$(date +%s)
NORMJIT_TEST_MAX_ELEMENTS=16777216 timeout 260 $cs --tool memcheck --error-exitcode 3 $b/tests/normjit_gpu_tests --gtest_filter='EachOrder/BackwardGated.*:AllVariants/BackwardMatrix.*' > $o/memcheck-gated-matrix.txt 2>&1; echo "memcheck rc=$? $(( $(date +%s)-t0 ))s"
grep -E "ERROR SUMMARY|^\[  (PASSED|FAILED)" $o/memcheck-gated-matrix.txt | head -5
t0=$(date +%s)
NORMJIT_TEST_MAX_ELEMENTS=262144 timeout 290 $cs --tool racecheck --error-exitcode 3 $b/tests/normjit_gpu_tests --gtest_filter='BackwardParallel.*:BackwardRecompute.*:EachOrder/BackwardGated.MatchesFloat64ReferenceOverTheIssuesShapes/*' > $o/racecheck-parallel-recompute-gated.txt 2>&1; echo "racecheck rc=$? $(( $(date +%s)-t0 ))s"
grep -E "RACECHECK SUMMARY|ERROR SUMMARY|^\[  (PASSED|FAILED)|^\[       OK" $o/racecheck-parallel-recompute-gated.txt | head -20
