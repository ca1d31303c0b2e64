#!/usr/bin/env bash
# Session 47, call 1 (H200). build-device at the commit that adds paired rows (candidates only,
# no rule). v/old = 0fa6bd3 (session 46's last commit).
# 1. The new GPU test (every paired candidate against the reference and its unpaired bits) and
#    the tests of the code the change moved (the register rows' loop: shared sums, rows copied
#    ahead, phased rows' layouts, the fused options that live in that loop).
# 2. Exhaustive tuning (paired candidates now in the space) of the rows short of 90%.
# 3. A/B old -> new of the heuristic's configs (unchanged, their PTX reordered): no regression.
set -uo pipefail
B=build-device
GPU_TEST_SHARDS=16 GPU_TEST_FILTER='BackwardPairedRows.*:BackwardSharedSums.*:BackwardSharedPrefetch.*:BackwardRecompute*:BackwardParallel*:BackwardGated*:BackwardLayout*:BackwardFused*' \
  BUILD_DIR=$B OUT=$OUT timeout 260 scripts/gpu-run.sh gpu-tests > $OUT/tests-run.txt 2>&1
echo "tests exit $? at $SECONDS s"; grep -E '^\[  (PASSED|FAILED|SKIPPED) |Failure' $OUT/gpu-tests.txt | sort | uniq -c | head -30
mkdir -p $OUT/tune
tune() {  # kind n dtype weight
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 60 $B/normjit tune --kind $1 --n $2 --dtype $3 --weight-dtype $4 \
    --m $((67108864 / $2)) --exhaustive > $OUT/tune/tune-$1-$2-$3-$4.txt 2>&1
  echo "tune $* exit $? at $SECONDS s: $(grep -E 'final|best|->' $OUT/tune/tune-$1-$2-$3-$4.txt | tail -1 | cut -c1-220)"
}
for n in 8192 14336 16384 32768 65536 131072 262144 5003 4095; do tune layernorm $n bf16 fp32; done
for n in 16384 32768 65536 5003; do tune rmsnorm $n bf16 fp32; done
for n in 16384 65536; do tune layernorm $n fp32 fp32; done
mkdir -p $OUT/ab
scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab \
  many "--graph --dtypes bf16,fp32 --weights fp32 --n 1024,4096,5003,8192,16384,65536,262144" \
  few "--graph --dtypes bf16 --weights fp32 --n 4096 --m 1,37,199" > $OUT/ab.txt 2>&1
echo "ab exit $? at $SECONDS s"; tail -40 $OUT/ab.txt
tar czf $OUT/call1-logs.tgz -C $OUT ab tune gpu-tests.txt tests-run.txt 2>/dev/null; rm -rf $OUT/ab $OUT/tune
