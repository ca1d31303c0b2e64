#!/usr/bin/env bash
# Session 40, call 2 (H200): build-device = the commit of this script. Call 1's tune had phased
# rows 1.1-2x slower than the heuristic's rows of an element a thread: γ and β read element by
# element from L1 every row. Now they are held in shared memory at the block's phase (the host
# launches a multiple of 8 row groups). The forward GPU tests again, then normjit tune --forward
# at odd 16-bit N, bf16, fp32 and bf16 γ, M = 16384, every candidate's time kept.
set -uo pipefail
B=build-device
GPU_TEST_SHARDS=16 GPU_TEST_FILTER='Forward*' BUILD_DIR=$B OUT=$OUT timeout 220 scripts/gpu-run.sh gpu-tests > $OUT/gpu-run.txt 2>&1
echo "forward tests exit $? at $SECONDS s"
grep -hE "^\[  (PASSED|FAILED) " $OUT/gpu-tests.txt | sort | uniq -c; grep -c '^\[       OK \]' $OUT/gpu-tests.txt
grep -E "^\[  FAILED  \]|Failure|worst|candidates checked" $OUT/gpu-tests.txt | head -30
tar czf $OUT/logs.tgz -C $OUT gpu-run.txt gpu-tests.txt environment.txt && rm -f $OUT/gpu-run.txt $OUT/gpu-tests.txt
export NORMJIT_CACHE_DIR=$(mktemp -d)
for w in fp32 bf16; do for k in layernorm rmsnorm; do for n in 1001 2001 3001 4095 5003 6001 8191 12289 16385 20001; do
  timeout 34 $B/normjit tune --forward --kind $k --n $n --dtype bf16 --weight-dtype $w --align 2 --m 16384 2>&1 | grep -E " time |^(layer|rms)norm"
done; done; done > $OUT/tune.txt
echo "tune at $SECONDS s"
grep -hE "^(layer|rms)norm" $OUT/tune.txt | tr -s ' ' | cut -c1-250
