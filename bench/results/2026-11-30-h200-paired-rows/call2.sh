#!/usr/bin/env bash
# Session 47, call 2 (H200). build-device as call 1 but the paired-rows test rewritten.
# 1. BackwardPairedRows (per problem, pinned at every M, unpaired bits where the grids match).
# 2. Exhaustive tuning of 16-bit rows of 12289-16384 (call 1: LN bf16 14336 took 186.5 us copying
#    a row ahead in one block of 896 threads, against 207.8 for the heuristic's pair of blocks;
#    RMS 16384 110.8 against 116.5): LN and RMS, bf16 and fp16, fp32 and 16-bit γ.
# 3. LN fp32 5003 again, old and new, three rounds (call 1: 0.96-0.97x with PTX the same but one
#    compare moved).
set -uo pipefail
B=build-device
GPU_TEST_SHARDS=6 GPU_TEST_FILTER='*BackwardPairedRows.*' BUILD_DIR=$B OUT=$OUT timeout 200 scripts/gpu-run.sh gpu-tests > $OUT/tests-run.txt 2>&1
echo "tests exit $? at $SECONDS s"; grep -E '^\[  (PASSED|FAILED|SKIPPED) |Failure' $OUT/gpu-tests.txt | sort | uniq -c | head -30
grep -A6 Failure $OUT/gpu-tests.txt | head -40
mkdir -p $OUT/tune
tune() {  # kind n dtype weight
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 60 $B/normjit tune --kind $1 --n $2 --dtype $3 --weight-dtype $4 \
    --m $((67108864 / $2)) --exhaustive > $OUT/tune/tune-$1-$2-$3-$4.txt 2>&1
  echo "tune $* exit $? at $SECONDS s"
}
for n in 12800 13312 13824 14336 14848 15360 16384; do
  for k in layernorm rmsnorm; do tune $k $n bf16 fp32; done
done
for n in 13824 14336 15360 16384; do tune layernorm $n bf16 same; tune layernorm $n fp16 fp32; tune rmsnorm $n fp16 same; done
for f in $OUT/tune/*.txt; do
  echo "== $(basename $f)"; grep -E " time " $f | sed 's/.*time [0-9]*\/[0-9]* //' | sort -t: -k2 -n | awk -F': ' '!seen[$1]++' | head -4
  grep -E " time 1/" $f | head -1 | sed 's/.*time 1\/[0-9]* /heuristic: /'
done
mkdir -p $OUT/ab
for r in 1 2 3; do for s in old new; do b=$B/normjit; [ $s = old ] && b=$B/v/old
  NORMJIT_CACHE_DIR=$(mktemp -d) $b bench --graph --dtypes fp32 --weights fp32 --kinds layernorm,rmsnorm --n 5003,5120,4096 --json $OUT/ab/f-$s$r.json > $OUT/ab/f-$s$r.txt 2>&1
done; python3 bench/compare_bench.py $OUT/ab/f-old$r.json $OUT/ab/f-new$r.json | cut -c1-120; done
tar czf $OUT/call2-logs.tgz -C $OUT ab tune gpu-tests.txt tests-run.txt 2>/dev/null; rm -rf $OUT/ab $OUT/tune
