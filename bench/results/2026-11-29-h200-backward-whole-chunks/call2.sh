#!/usr/bin/env bash
# Session 41, call 2 (H200): build-device = the commit of this script. Call 1: the backward's
# whole-chunk loads measured 0.74x (reverted). Its SASS showed why, and the forward has the same
# flaw: a select (the mask) or a branch a slot right after a load waits for it there, so a
# prefetching phased block's next-row loads stalled the current row (phased prefetch never won
# in session 40's tuning). The forward's phased loads are now whole chunks under a predicate with
# nothing after them; complete_phased masks (and reads the tensor's last chunk) where the row is
# first worked. Forward GPU tests; a tune of odd N (are prefetching phased blocks ahead now?);
# the forward A/B against 53e0333 on the rules (no prefetch there: expect within noise).
set -uo pipefail
B=build-device
GPU_TEST_SHARDS=16 GPU_TEST_FILTER='Forward*' BUILD_DIR=$B OUT=$OUT timeout 200 scripts/gpu-run.sh gpu-tests > $OUT/gpu-run.txt 2>&1
echo "forward tests exit $? at $SECONDS s"
grep -hE "^\[  (PASSED|FAILED) " $OUT/gpu-tests.txt | sort | uniq -c; grep -E "^\[  FAILED  \]|Failure" $OUT/gpu-tests.txt | head
tar czf $OUT/logs.tgz -C $OUT gpu-run.txt gpu-tests.txt environment.txt && rm -f $OUT/gpu-run.txt $OUT/gpu-tests.txt
export NORMJIT_CACHE_DIR=$(mktemp -d)
for s in "layernorm 4095" "layernorm 5003" "layernorm 12289" "layernorm 20001" "rmsnorm 5003" "rmsnorm 12289" "rmsnorm 20001"; do
  set -- $s
  [ $SECONDS -lt 330 ] && timeout 30 $B/normjit tune --forward --kind $1 --n $2 --dtype bf16 --weight-dtype fp32 --align 2 --m 16384 2>&1 | grep -E " time |^(layer|rms)norm"
done > $OUT/tune.txt
echo "tune at $SECONDS s"; grep -hE "^(layer|rms)norm" $OUT/tune.txt | tr -s ' ' | cut -c1-250
grep -h "prefetch.*phased" $OUT/tune.txt | sed 's/.*forward N=\([0-9]*\).*time [0-9/]* /\1 /' | cut -c1-160
unset NORMJIT_CACHE_DIR
N=1001,2001,4095,5003,6001,12289,16385,20001,30001
timeout 200 scripts/bench-ab.sh $B/v/old $B/normjit $OUT \
  fwd "--forward --graph --dtypes bf16 --weights fp32 --n $N" > $OUT/ab.txt 2>&1
echo "ab at $SECONDS s"; cut -c1-110 $OUT/ab.txt
tar czf $OUT/ab-logs.tgz -C $OUT $(cd $OUT && ls *-old*.* *-new*.*) && (cd $OUT && rm -f *-old*.* *-new*.*)
