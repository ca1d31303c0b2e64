#!/usr/bin/env bash
# Session 47, call 3 (H200). build-device: paired rows with the unpaired configs' PTX restored
# (call 1-2: LN fp32 5003 0.95-0.97x, a compare moved past the row reduction).
# 1. BackwardPairedRows (configs the engine prunes left out).
# 2. Exhaustive tuning of 16-bit rows of 9216-16384 around call 2's (rows copied ahead won by
#    1.07-1.19x at 12800, 13312, 14336, 14848, lost at 13824 and 15360).
# 3. A/B 0fa6bd3 -> new: fp32 5003/5120/4096, 16-bit phased 5003, three rounds.
set -uo pipefail
B=build-device
GPU_TEST_SHARDS=6 GPU_TEST_FILTER='*BackwardPairedRows.*' BUILD_DIR=$B OUT=$OUT timeout 200 scripts/gpu-run.sh gpu-tests > $OUT/tests-run.txt 2>&1
echo "tests exit $? at $SECONDS s"; grep -E '^\[  (PASSED|FAILED|SKIPPED) |Failure' $OUT/gpu-tests.txt | sort | uniq -c | head -30
grep -A6 Failure $OUT/gpu-tests.txt | head -30
mkdir -p $OUT/tune
tune() {  # kind n dtype weight
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 60 $B/normjit tune --kind $1 --n $2 --dtype $3 --weight-dtype $4 \
    --m $((67108864 / $2)) --exhaustive > $OUT/tune/tune-$1-$2-$3-$4.txt 2>&1
}
for n in 9216 10240 11264 12288 12544 13056 13568 13824 14080 14592; do
  for k in layernorm rmsnorm; do tune $k $n bf16 fp32; done
done
echo "tuned at $SECONDS s"
for f in $OUT/tune/*.txt; do
  echo "== $(basename $f)"; grep -E " time " $f | sed 's/.*time [0-9]*\/[0-9]* //' | sort -t: -k2 -n | awk -F': ' '!seen[$1]++' | head -3
  grep -E " time 1/" $f | head -1 | sed 's/.*time 1\/[0-9]* /heuristic: /'
done
mkdir -p $OUT/ab
for r in 1 2 3; do for s in old new; do b=$B/normjit; [ $s = old ] && b=$B/v/old
  NORMJIT_CACHE_DIR=$(mktemp -d) $b bench --graph --dtypes fp32,bf16 --weights fp32 --n 5003,5120,4096 --json $OUT/ab/f-$s$r.json > $OUT/ab/f-$s$r.txt 2>&1
done; python3 bench/compare_bench.py $OUT/ab/f-old$r.json $OUT/ab/f-new$r.json | cut -c1-120; done
tar czf $OUT/call3-logs.tgz -C $OUT ab tune gpu-tests.txt tests-run.txt 2>/dev/null; rm -rf $OUT/ab $OUT/tune
