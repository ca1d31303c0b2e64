#!/usr/bin/env bash
# Session 35, call 6 (H200): every GPU test at the session's last code (the rule narrowed to bf16
# rows of an element), and its A/B against call 4/5's binary (build-device/v/old = 9321834) at
# the fp16 rows it gives back to 16 elements a thread.
set -uo pipefail
B=build-device
GPU_TEST_SHARDS=16 BUILD_DIR=$B OUT=$OUT timeout 400 scripts/gpu-run.sh gpu-tests > $OUT/gpu-run.txt 2>&1
echo "GPU tests: exit $? at $SECONDS s"; grep -hE "^\[  (PASSED|FAILED) " $OUT/gpu-tests.txt | sort | uniq -c | head; grep -E "^\[  FAILED  \]" $OUT/gpu-tests.txt | head -20
grep -c '^\[       OK \]' $OUT/gpu-tests.txt
mkdir -p $OUT/ab
timeout 100 scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab \
  fp16 "--graph --kinds layernorm,rmsnorm --dtypes fp16 --weights fp32 --n 1025,1505,2049,2505" > $OUT/ab.txt 2>&1
echo "ab: exit $? at $SECONDS s"; grep -E "median" $OUT/ab.txt
tar -C $OUT -czf $OUT/logs.tgz gpu-tests.txt environment.txt ab && rm -rf $OUT/gpu-tests.txt $OUT/environment.txt $OUT/ab
