#!/usr/bin/env bash
# Call I of session 9: racecheck over the rest of the gated tests (every family alone and with
# every other option, other dx dtypes and no weight), both gate orders.
set -uo pipefail
b=build-device; o=$OUT
export NORMJIT_CACHE_DIR=$(mktemp -d)
cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
t0=$(date +%s)
NORMJIT_TEST_MATRIX=sanitize NORMJIT_TEST_MAX_ELEMENTS=262144 timeout 500 $cs --tool racecheck --error-exitcode 3 $b/tests/normjit_gpu_tests --gtest_filter='EachOrder/BackwardGated.EveryKernelFamilyAloneAndWithEveryOtherOption/*:EachOrder/BackwardGated.OtherDxDtypesAndNoWeight/*' > $o/racecheck-gated-families.txt 2>&1; echo "racecheck rc=$? $(( $(date +%s)-t0 ))s"
grep -E "RACECHECK SUMMARY|ERROR SUMMARY|^\[  (PASSED|FAILED)|^\[       OK" $o/racecheck-gated-families.txt | head -20
