#!/usr/bin/env bash
# Session 40, call 5 (H200): build-device = the commit of this script. Call 4's A/B had the
# unphased LayerNorm forward 1-3% slower at 3001-12289 (same configs; the template's element
# counts and squares had changed for every row). Those are now as they were for unphased rows
# (their PTX identical at 3001 align 2). The A/B of LayerNorm's unphased and aligned forward
# against 2b5657c, bf16 fp32 γ, two rounds; then the forward GPU tests.
set -uo pipefail
B=build-device
scripts/bench-ab.sh $B/v/old $B/normjit $OUT \
  ln "--forward --graph --kinds layernorm --dtypes bf16 --weights fp32 --n 1001,3001,4096,6001,8191,8192,12288,12289,30001,65536,262144" > $OUT/ab.txt 2>&1
echo "ab at $SECONDS s"; cut -c1-120 $OUT/ab.txt
tar czf $OUT/ab-logs.tgz -C $OUT $(cd $OUT && ls *-old*.* *-new*.*) && (cd $OUT && rm -f *-old*.* *-new*.*)
GPU_TEST_SHARDS=16 GPU_TEST_FILTER='Forward*' BUILD_DIR=$B OUT=$OUT timeout 200 scripts/gpu-run.sh gpu-tests > $OUT/gpu-run.txt 2>&1
echo "forward tests exit $? at $SECONDS s"
grep -hE "^\[  (PASSED|FAILED) " $OUT/gpu-tests.txt | sort | uniq -c; grep -E "^\[  FAILED  \]|Failure" $OUT/gpu-tests.txt | head
tar czf $OUT/logs.tgz -C $OUT gpu-run.txt gpu-tests.txt environment.txt && rm -f $OUT/gpu-run.txt $OUT/gpu-tests.txt
