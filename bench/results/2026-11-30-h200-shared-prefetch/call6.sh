#!/usr/bin/env bash
# Session 46, call 6 (H200). build-device: rows copied ahead slot by slot (each slot of the row
# after next copied as soon as the first pass has used the slot's values, instead of after the
# whole first pass); 32 bytes spilled at 64 registers where there were none. v/old = 5128fc3
# (calls 4-5).
# 1. A/B old -> new, RMSNorm's 16-bit rows that copy ahead (98304-262144), bf16 and fp16.
# 2. The rows-copied-ahead GPU tests on the new kernels.
set -uo pipefail
B=build-device
mkdir -p $OUT/ab
scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab \
  rms "--graph --kinds rmsnorm --dtypes bf16,fp16 --weights fp32 --n 98304,131072,163840,196608,262144" > $OUT/ab.txt 2>&1
echo "ab exit $? at $SECONDS s"; grep -v '^bench-ab' $OUT/ab.txt | tail -26
NORMJIT_CACHE_DIR=$(mktemp -d) timeout 200 $B/tests/normjit_gpu_tests --gtest_filter='BackwardSharedPrefetch.*' > $OUT/tests.txt 2>&1
echo "tests exit $? at $SECONDS s"; grep -E '^\[  (PASSED|FAILED)|^\[       OK|Failure' $OUT/tests.txt | head
tar czf $OUT/call6-logs.tgz -C $OUT ab tests.txt 2>/dev/null; rm -rf $OUT/ab
