#!/usr/bin/env bash
# Session 20, call 11: γ in shared memory for parallel norms too where it fits (this commit)
# against bd9060e (parallel norms read γ from L1) in A/B; the parallel norms' GPU tests.
set -uo pipefail
b=build-device; o=$OUT; w=$(mktemp -d)
scripts/bench-ab.sh $b/v/old $b/normjit $w \
  par "--graph --dtypes bf16 --weights fp32 --n 8192,12288,14336,16384,32768,65536 --fused parallel" > $o/ab.txt 2>&1
echo "ab done at ${SECONDS}s"
tar -C $w -czf $o/results.tgz .
GPU_TEST_SHARDS=12 GPU_TEST_FILTER='*BackwardParallel*:BackwardFusedFamilies.*:BackwardSharedSums*' BUILD_DIR=$b scripts/gpu-run.sh gpu-tests > $o/gpu-run.txt 2>&1; echo "gpu tests exit $? at ${SECONDS}s"
grep -E "^shard" $o/gpu-run.txt
gzip -f $o/gpu-tests.txt
ls -la $o
