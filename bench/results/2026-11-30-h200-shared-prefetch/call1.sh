#!/usr/bin/env bash
# Session 46, call 1 (H200). build-device: rows in registers copied ahead into shared memory
# (LaunchConfig::shared_prefetch, new), on top of session 45's KernelLaunch refactor (c7bb656,
# not yet run on a GPU). v/old = bdf03db (c7bb656^).
# 1. The new GPU tests (every shared-prefetch candidate against the reference, same bits twice)
#    and the dependent-launch test.
# 2. Exhaustive tuning (the search space now holds the shared-prefetch candidates) of the long
#    rows that miss 90%: LN bf16 fp32 γ 16384 / 65536 / 262144, RMS bf16 262144, M·N = 64 Mi.
# 3. A/B old -> new of the heuristic's configs (unchanged): the refactor's launches, same times.
set -uo pipefail
B=build-device
NORMJIT_CACHE_DIR=$(mktemp -d) timeout 200 $B/tests/normjit_gpu_tests \
  --gtest_filter='BackwardSharedPrefetch.*:DependentLaunches.*' > $OUT/new-tests.txt 2>&1
echo "new tests exit $? at $SECONDS s"; grep -E '^\[  (PASSED|FAILED|SKIPPED) |Failure' $OUT/new-tests.txt | head -20
for shape in "layernorm 16384" "layernorm 65536" "layernorm 262144" "rmsnorm 262144"; do
  set -- $shape
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 100 $B/normjit tune --kind $1 --n $2 --dtype bf16 --weight-dtype fp32 \
    --m $((67108864 / $2)) --exhaustive > $OUT/tune-$1-$2.txt 2>&1
  echo "tune $1 $2 exit $? at $SECONDS s"; tail -4 $OUT/tune-$1-$2.txt
done
mkdir -p $OUT/ab
scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab \
  long "--graph --dtypes bf16 --weights fp32 --n 1024,16384,262144,1048576" \
  few "--graph --dtypes bf16 --weights fp32 --n 4096 --m 1,37,199" > $OUT/ab.txt 2>&1
echo "ab exit $? at $SECONDS s"; cat $OUT/ab.txt | tail -30
tar czf $OUT/call1-logs.tgz -C $OUT ab new-tests.txt 2>/dev/null; rm -rf $OUT/ab
