#!/usr/bin/env bash
# Session 29, call 1 (H200), 50783ff (branch next/memory-rich-2 on b100b60): the memory-rich
# rules widened (16-bit clusters of two to 7168, pairs from 13313; fp32 clusters of two at
# 4097-6144 and 13313-15360). Every GPU test (the few-groups and shared-sums tests now run
# 12288); exhaustive tuning of the forward's shortest shapes on the H200 (data for forward rules);
# an A/B against b100b60's normjit (build-device/v/old) across the ranges the rules change.
set -uo pipefail
B=build-device
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,clocks.max.mem,driver_version --format=csv > $OUT/gpu.txt 2>&1
GPU_TEST_SHARDS=16 BUILD_DIR=$B OUT=$OUT timeout 290 scripts/gpu-run.sh gpu-tests > $OUT/gpu-run.txt 2>&1
echo "GPU tests: exit $? at $SECONDS s"; grep -E "^shard|FAILED" $OUT/gpu-run.txt | head -30
T=$(mktemp -d)
for s in "layernorm bf16 5120" "layernorm bf16 7168" "layernorm bf16 4095" "layernorm bf16 5003" "layernorm bf16 12288" \
         "layernorm bf16 65536" "rmsnorm bf16 65536" "layernorm bf16 131072" "layernorm fp32 65536" "rmsnorm bf16 4095"; do
  set -- $s
  [ $SECONDS -lt 360 ] || { echo "tune: out of time before $s"; continue; }
  w=""; [ $2 = bf16 ] && w="--weight-dtype fp32"
  NORMJIT_CACHE_DIR=$T timeout 25 $B/normjit tune --forward --kind $1 --dtype $2 $w --n $3 --m $((67108864 / $3)) --exhaustive 2>>$OUT/tune.err | grep -v "^  fit"
done > $OUT/tune-forward.txt
grep -E "^(layernorm|rmsnorm)" $OUT/tune-forward.txt | cut -c1-40,100-150
ARGS="--forward --graph --kinds layernorm,rmsnorm --dtypes bf16,fp32 --weights fp32 --n 4095,5003,5120,7168,12288,65536,131072"
NORMJIT_CACHE_DIR=$(mktemp -d) timeout 25 $B/normjit bench $ARGS --json $OUT/fwd-heuristic.json > $OUT/fwd-heuristic.txt 2>&1
NORMJIT_CACHE_DIR=$T timeout 25 $B/normjit bench $ARGS --json $OUT/fwd-tuned.json > $OUT/fwd-tuned.txt 2>&1
python3 bench/compare_bench.py $OUT/fwd-heuristic.json $OUT/fwd-tuned.json | cut -c1-200
echo "forward done at $SECONDS s"
mkdir -p $OUT/ab
left=$((575 - SECONDS))
timeout $left scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab \
  b16 "--graph --dtypes bf16,fp16 --weights fp32 --n 4608,5120,6144,7168,13824,14336,15360" \
  f32 "--graph --dtypes fp32 --weights fp32 --n 4608,5120,5632,6144,13824,14336,14848,15360" > $OUT/ab.txt 2>&1
echo "ab: exit $? at $SECONDS s"; grep -E "median|copy GB" $OUT/ab.txt
tar -C $OUT -czf $OUT/logs.tgz ab gpu-tests.txt && rm -rf $OUT/ab $OUT/gpu-tests.txt
