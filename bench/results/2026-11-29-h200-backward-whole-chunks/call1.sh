#!/usr/bin/env bash
# Session 41, call 1 (H200): build-device = the commit of this script. The backward's phased rows
# (odd 16-bit N in phase, 5003-30001 by the rule) now load every x and dy chunk whole under a
# predicate and zero what lies outside the row (PackedSlot::load_phased_whole, the forward's since
# session 40), not the first and last chunks element by element in a branch a slot. The whole GPU
# suite; then the backward A/B against 53e0333 (odd N, bf16 fp32 γ, graph).
set -uo pipefail
B=build-device
GPU_TEST_SHARDS=16 BUILD_DIR=$B OUT=$OUT timeout 400 scripts/gpu-run.sh gpu-tests > $OUT/gpu-run.txt 2>&1
echo "gpu tests exit $? at $SECONDS s"
grep -hE "^\[  (PASSED|FAILED) " $OUT/gpu-tests.txt | sort | uniq -c; grep -E "^\[  FAILED  \]|Failure" $OUT/gpu-tests.txt | head
tar czf $OUT/logs.tgz -C $OUT gpu-run.txt gpu-tests.txt environment.txt && rm -f $OUT/gpu-run.txt $OUT/gpu-tests.txt
N=4095,5003,6001,8191,12289,16385,20001,30001
timeout 170 scripts/bench-ab.sh $B/v/old $B/normjit $OUT \
  bf16 "--graph --dtypes bf16 --weights fp32 --n $N" > $OUT/ab.txt 2>&1
echo "ab at $SECONDS s"; cut -c1-110 $OUT/ab.txt
tar czf $OUT/ab-logs.tgz -C $OUT $(cd $OUT && ls *-old*.* *-new*.*) && (cd $OUT && rm -f *-old*.* *-new*.*)
# Do phased candidates now beat rows of an element a thread at 1001-4095? (time left permitting)
export NORMJIT_CACHE_DIR=$(mktemp -d)
for k in layernorm rmsnorm; do for n in 2001 4095; do
  [ $SECONDS -lt 560 ] && timeout 15 $B/normjit tune --kind $k --n $n --dtype bf16 --weight-dtype fp32 --align 2 --m 16384 2>&1 | grep -E " time |^(layer|rms)norm"
done; done > $OUT/tune.txt
echo "tune at $SECONDS s"; grep -hE "^(layer|rms)norm" $OUT/tune.txt | tr -s ' ' | cut -c1-250
