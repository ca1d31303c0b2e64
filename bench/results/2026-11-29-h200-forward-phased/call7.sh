#!/usr/bin/env bash
# Session 40, call 7 (H200): build-device = the commit of this script. Call 6's profile had the
# phased LN forward waiting on x (long scoreboard at its first use, 18% of samples; DRAM 41%
# against 63% for aligned LN 5120, which prefetches). Phased x slots now load their whole
# aligned chunk under a predicate and zero what lies outside the row (no branch a slot) but in
# the tensor's last chunk. The A/B against 2b5657c as call 4 (compare call4-ab.txt), a tune of
# LN/RMS 4095, 5003, 12289 (is prefetch now ahead?), and the forward GPU tests.
set -uo pipefail
B=build-device
N=1001,2001,4095,5003,6001,12289,16385,20001,30001
scripts/bench-ab.sh $B/v/old $B/normjit $OUT \
  bf16 "--forward --graph --dtypes bf16 --weights fp32 --n $N" > $OUT/ab.txt 2>&1
echo "ab at $SECONDS s"; cut -c1-110 $OUT/ab.txt
tar czf $OUT/ab-logs.tgz -C $OUT $(cd $OUT && ls *-old*.* *-new*.*) && (cd $OUT && rm -f *-old*.* *-new*.*)
export NORMJIT_CACHE_DIR=$(mktemp -d)
for k in layernorm rmsnorm; do for n in 4095 5003 12289; do
  timeout 34 $B/normjit tune --forward --kind $k --n $n --dtype bf16 --weight-dtype fp32 --align 2 --m 16384 2>&1 | grep -E " time |^(layer|rms)norm"
done; done > $OUT/tune.txt
echo "tune at $SECONDS s"; grep -hE "^(layer|rms)norm" $OUT/tune.txt | tr -s ' ' | cut -c1-250
unset NORMJIT_CACHE_DIR
GPU_TEST_SHARDS=16 GPU_TEST_FILTER='Forward*' BUILD_DIR=$B OUT=$OUT timeout 200 scripts/gpu-run.sh gpu-tests > $OUT/gpu-run.txt 2>&1
echo "forward tests exit $? at $SECONDS s"
grep -hE "^\[  (PASSED|FAILED) " $OUT/gpu-tests.txt | sort | uniq -c; grep -E "^\[  FAILED  \]|Failure" $OUT/gpu-tests.txt | head
tar czf $OUT/logs.tgz -C $OUT gpu-run.txt gpu-tests.txt environment.txt && rm -f $OUT/gpu-run.txt $OUT/gpu-tests.txt
