#!/usr/bin/env bash
# Call H of session 9: racecheck over what call E did not reach: recompute's gamma = 0 columns
# and the gated tests against the reference (both gate orders), packed rows included.
set -uo pipefail
b=build-device; o=$OUT
export NORMJIT_CACHE_DIR=$(mktemp -d)
scripts/gpu-environment.sh $b > $o/environment.txt 2>&1; head -2 $o/environment.txt
cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
t0=$(date +%s)
NORMJIT_TEST_MATRIX=sanitize NORMJIT_TEST_MAX_ELEMENTS=262144 timeout 480 $cs --tool racecheck --error-exitcode 3 $b/tests/normjit_gpu_tests --gtest_filter='BackwardRecompute.ColumnsWhereGammaIsZero:EachOrder/BackwardGated.MatchesFloat64ReferenceOverTheIssuesShapes/*:EachOrder/BackwardGated.MisalignedRows/*' > $o/racecheck.txt 2>&1; echo "racecheck rc=$? $(( $(date +%s)-t0 ))s"
grep -E "RACECHECK SUMMARY|ERROR SUMMARY|^\[  (PASSED|FAILED)|^\[       OK" $o/racecheck.txt | head -20
