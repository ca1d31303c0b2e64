#!/usr/bin/env bash
# Session 31, call 3 (H200), 638a897: the row reducer as a tree over 16-byte loads, A/B against
# 6e696a5 (build-device/v/old: the warps' sums added one after another) and against 9607951
# (build-device/v/bfly: the butterfly of call 2); the forward's held-weights rule rides along in
# the fwd set against 6e696a5. Then every GPU test.
set -uo pipefail
B=build-device
mkdir -p $OUT/ab $OUT/ab-bfly
BWD="--graph --dtypes bf16 --weights fp32 --n 1024,4096,5003,8192,12288,16384,32768,65536,262144"
FUSED="--graph --dtypes bf16 --weights fp32 --n 4096,8192 --fused none,parallel,recompute,gate,residual"
timeout 200 scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab bwd "$BWD" fused "$FUSED" \
  fwd "--forward --graph --dtypes bf16,fp16 --weights fp32 --kinds layernorm --n 4096,5120,8192,12288,14336,16384" \
  fwdrms "--forward --graph --dtypes bf16 --weights fp32 --kinds rmsnorm --n 1024,8192,16384,65536" > $OUT/ab.txt 2>&1
echo "ab: exit $? at $SECONDS s"; grep -E "median|copy GB" $OUT/ab.txt
timeout 120 scripts/bench-ab.sh $B/v/bfly $B/normjit $OUT/ab-bfly bwd "$BWD" \
  fwd "--forward --graph --dtypes bf16 --weights fp32 --n 5120,8192,16384" > $OUT/ab-bfly.txt 2>&1
echo "ab bfly: exit $? at $SECONDS s"; grep -E "median|copy GB" $OUT/ab-bfly.txt
GPU_TEST_SHARDS=16 BUILD_DIR=$B OUT=$OUT timeout $((590 - SECONDS)) scripts/gpu-run.sh gpu-tests > $OUT/gpu-run.txt 2>&1
echo "GPU tests: exit $? at $SECONDS s"; grep -hE "^\[  (PASSED|FAILED) " $OUT/gpu-tests.txt | sort | uniq -c | head; grep -E "^\[  FAILED  \]" $OUT/gpu-tests.txt | head -20
tar -C $OUT -czf $OUT/logs.tgz ab ab-bfly gpu-tests.txt environment.txt && rm -rf $OUT/ab $OUT/ab-bfly $OUT/gpu-tests.txt $OUT/environment.txt
