#!/usr/bin/env bash
# Session 35, call 2 (H200): rows held in registers load their slots under a predicate instead
# of a branch each (load_slot_if; the unguarded element loads removed). build-device/v/old =
# 8e0473a, build-device/normjit = the change.
# 1) GPU tests that run odd and misaligned rows (a subset; the whole suite runs after the rule).
# 2) A/B, one round each way: the 16-bit and fp32 rows of 1001-5003 at every alignment class,
#    and the sweep's N (bf16, fp32).
# 3) Exhaustive tuning with the change, 16-bit rows aligned to 2, 4, 8 bytes up to 4096.
set -uo pipefail
B=build-device
GPU_TEST_SHARDS=16 GPU_TEST_FILTER='EveryN/*:BackwardMisalignedPointers.*:BackwardThreads.*:BackwardStridedRows.*:AllVariants/*' \
  BUILD_DIR=$B OUT=$OUT timeout 200 scripts/gpu-run.sh gpu-tests > $OUT/gpu-subset.txt 2>&1
echo "gpu subset exit $? at $SECONDS s"; tail -5 $OUT/gpu-subset.txt
ab=$(mktemp -d)
odd=1001,1002,1004,1505,1506,1508,2001,2002,2004,2505,2506,2508,3001,3002,3004,3505,3506,3508,4001,4002,4004,4095,5003
timeout 300 scripts/bench-ab.sh $B/v/old $B/normjit $ab \
  odd "--graph --kinds layernorm,rmsnorm --dtypes bf16,fp32 --weights fp32 --n $odd" \
  sweep "--graph --kinds layernorm,rmsnorm --dtypes bf16,fp32 --weights fp32" > $OUT/ab.txt 2>&1
echo "ab exit $? at $SECONDS s"
grep -E "median|^%" $OUT/ab.txt
db=$(mktemp -d)
for spec in 1505:2 2505:2 3001:2 3505:2 4001:2 1506:4 3002:4 4002:4 1508:8 3004:8 4004:8; do
  IFS=: read -r n align <<<"$spec"
  for kind in layernorm rmsnorm; do
    [ $SECONDS -lt 520 ] || { echo "out of time before $kind $spec"; break 2; }
    NORMJIT_CACHE_DIR=$db timeout 40 $B/normjit tune --kind $kind --dtype bf16 --weight-dtype fp32 --n $n --align $align \
      --m $((67108864 / n)) --exhaustive >>$OUT/tune.txt 2>>$OUT/tune.err
  done
done
cp $db/tuning.toml $OUT/ 2>/dev/null
grep -E '^(layernorm|rmsnorm)' $OUT/tune.txt | sed -E 's/ x=bf16 dy=bf16 dx=bf16 weight=fp32 \+weight( \+bias)?//' | cut -c1-250
echo "done at $SECONDS s"
cp $ab/*.json $OUT/ 2>/dev/null
tar czf $OUT/logs.tgz -C $OUT $(cd $OUT && ls *.txt tune.err *.json 2>/dev/null | grep -v '^ab.txt$') 2>/dev/null
(cd $OUT && rm -f gpu-subset.txt gpu-tests.txt tune.txt tune.err *.json)
