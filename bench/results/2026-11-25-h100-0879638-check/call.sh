#!/usr/bin/env bash
# Session 20, call 10: the shared-piece address refactor (0879638: shared sums and shared weights
# through one function; the compiled kernels' registers moved, e.g. LN bf16 12288 78 → 76)
# against 64adcc7 in A/B where γ is held in shared memory, and the GPU tests of those configs.
set -uo pipefail
b=build-device; o=$OUT; w=$(mktemp -d)
scripts/bench-ab.sh $b/v/old $b/normjit $w \
  sw "--graph --dtypes bf16 --weights fp32 --n 12288,14336,65536,262144" \
  f32 "--graph --dtypes fp32 --n 131072" > $o/ab.txt 2>&1
echo "ab done at ${SECONDS}s"
tar -C $w -czf $o/results.tgz .
GPU_TEST_SHARDS=12 GPU_TEST_FILTER='BackwardSharedSums*:*BackwardFewGroups*:BackwardDeterminism*:*BackwardMatrix*:BackwardFusedFamilies.*' BUILD_DIR=$b scripts/gpu-run.sh gpu-tests > $o/gpu-run.txt 2>&1; echo "gpu tests exit $? at ${SECONDS}s"
grep -E "^shard" $o/gpu-run.txt
gzip -f $o/gpu-tests.txt
ls -la $o
