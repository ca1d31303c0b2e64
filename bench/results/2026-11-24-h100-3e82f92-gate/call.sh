#!/usr/bin/env bash
# Session 14, call 4: the gate's packed rows holding z (kHoldsGate) against the code before it.
# build-device: this commit; build-device-old: 9e6d619 (before). Both: the gated bandwidth at
# 4096/8192/32768 (heuristic configs) and exhaustive tuning of the gated problems there; then
# the new build's gated and shared-sums GPU tests.
set -uo pipefail
o=$OUT
scripts/gpu-environment.sh build-device > $o/environment.txt 2>&1
export NORMJIT_CACHE_DIR=$(mktemp -d)
for v in old new; do
  b=build-device; [ $v = old ] && b=build-device-old
  timeout 100 $b/normjit bench --kinds rmsnorm --dtypes bf16,fp16 --weights fp32 --n 4096,8192,32768 --fused none,gate,gate-before > $o/bench-$v.txt 2>&1
  echo "bench $v exit $?" >> $o/bench-$v.txt
  timeout 120 bash -c "
    for nm in '4096 16384' '8192 8192' '32768 2048'; do
      set -- \$nm
      for dt in bf16 fp16; do for g in after-norm before-norm; do
        $b/normjit tune --kind rmsnorm --n \$1 --m \$2 --dtype \$dt --weight-dtype fp32 --gate \$g --exhaustive
      done; done
    done" > $o/tune-$v.txt 2>/dev/null
  echo "tune $v exit $?" >> $o/tune-$v.txt
done
grep -E " (gate|gate-before|none) " $o/bench-old.txt $o/bench-new.txt | cut -c1-40,95-135,150-
grep -hE "^rmsnorm" $o/tune-old.txt $o/tune-new.txt | cut -c1-60,95-150
pids=()
for i in 0 1 2 3; do
  GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$i timeout 200 build-device/tests/normjit_gpu_tests --gtest_filter='*BackwardGated*:*BackwardSharedSums*' > $o/shard$i.txt 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait $p; done
for i in 0 1 2 3; do echo "== shard $i"; cat $o/shard$i.txt; done > $o/gpu-tests.txt; rm -f $o/shard*.txt
grep -E "^\[  (FAILED|PASSED) |^\[  FAILED" $o/gpu-tests.txt
