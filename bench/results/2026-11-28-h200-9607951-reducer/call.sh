#!/usr/bin/env bash
# Session 31, call 2 (H200): A/B of this commit (build-device/normjit) against 6e696a5
# (build-device/v/old): the row reducer's warps meeting in a butterfly (backward and forward)
# and the forward's held γ and β in every two-slot prefetching block of the memory-rich rule;
# then every GPU test.
set -uo pipefail
B=build-device
mkdir -p $OUT/ab
timeout 330 scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab \
  bwd "--graph --dtypes bf16 --weights fp32 --n 1024,4096,5003,8192,12288,16384,32768,65536,262144" \
  fwd "--forward --graph --dtypes bf16,fp16 --weights fp32 --kinds layernorm --n 4096,5120,8192,12288,14336,16384" \
  fwdrms "--forward --graph --dtypes bf16 --weights fp32 --kinds rmsnorm --n 1024,8192,16384,65536" > $OUT/ab.txt 2>&1
echo "ab: exit $? at $SECONDS s"; grep -E "median|copy GB" $OUT/ab.txt
GPU_TEST_SHARDS=16 BUILD_DIR=$B OUT=$OUT timeout $((590 - SECONDS)) scripts/gpu-run.sh gpu-tests > $OUT/gpu-run.txt 2>&1
echo "GPU tests: exit $? at $SECONDS s"; grep -hE "^\[  (PASSED|FAILED) " $OUT/gpu-tests.txt | sort | uniq -c | head; grep -E "^\[  FAILED  \]" $OUT/gpu-tests.txt | head -20
tar -C $OUT -czf $OUT/logs.tgz ab gpu-tests.txt environment.txt && rm -rf $OUT/ab $OUT/gpu-tests.txt $OUT/environment.txt
