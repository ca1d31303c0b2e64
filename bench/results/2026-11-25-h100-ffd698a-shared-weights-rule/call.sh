#!/usr/bin/env bash
# Session 20, call 5: γ in shared memory where one block an SM or a cluster holds the columns
# (this commit) against 4d2c889 (γ from L1) in A/B, at shapes of call 4 and sizes inside the
# rule's range it did not time; then every GPU test.
set -uo pipefail
b=build-device; o=$OUT; w=$(mktemp -d)
scripts/bench-ab.sh $b/v/old $b/normjit $w \
  bf16 "--graph --dtypes bf16 --weights fp32 --n 5120,8192,9216,11264,12288,13312,14336,20480,24576,40960,65536,98304,196608,262144" \
  fused "--graph --dtypes bf16,fp16 --weights fp32 --kinds layernorm --n 10240,14336 --fused residual,all,recompute" > $o/ab.txt 2>&1
echo "ab done at ${SECONDS}s"
GPU_TEST_SHARDS=12 BUILD_DIR=$b scripts/gpu-run.sh gpu-tests > $o/gpu-run.txt 2>&1; echo "gpu tests exit $?"
grep -E "^shard" $o/gpu-run.txt
gzip -f $o/gpu-tests.txt
tar -C $w -czf $o/results.tgz .
ls -la $o
