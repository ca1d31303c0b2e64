#!/usr/bin/env bash
# Call J of session 9: racecheck over the fused-option tests call D did not reach.
set -uo pipefail
b=build-device; o=$OUT
export NORMJIT_CACHE_DIR=$(mktemp -d)
cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
t0=$(date +%s)
NORMJIT_TEST_MATRIX=sanitize NORMJIT_TEST_MAX_ELEMENTS=262144 timeout 450 $cs --tool racecheck --error-exitcode 3 $b/tests/normjit_gpu_tests --gtest_filter='BackwardFusedFamilies.NanInDresidualReachesExactlyItsElement:EachOption/BackwardFused.*' > $o/racecheck-fused-options.txt 2>&1; echo "racecheck rc=$? $(( $(date +%s)-t0 ))s"
grep -E "RACECHECK SUMMARY|ERROR SUMMARY|^\[  (PASSED|FAILED)|^\[       OK" $o/racecheck-fused-options.txt | head -20
