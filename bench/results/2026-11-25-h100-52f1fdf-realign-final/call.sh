#!/usr/bin/env bash
# Session 21, call 4 (working tree on 52f1fdf, the heuristic as committed: realigned slots for
# 16-bit rows aligned to less from N = 16385 in the backward where the row is held in registers,
# from 32769 in the forward): A/B against 52f1fdf at fp16 and same-dtype weights and the shapes
# call 3 did not time; the GPU tests of unaligned rows; memcheck of the realigned kernels.
set -uo pipefail
b=build-device; o=$OUT; w=$(mktemp -d)
L=16385,24577,32769,65537,131073,262143,262145,1048577
scripts/bench-ab.sh $b/v/old $b/normjit $w \
  bwd "--graph --weights fp32,same --dtypes fp16 --n $L" \
  bwdbf "--graph --weights same --dtypes bf16 --n $L" \
  fwd "--forward --graph --weights fp32,same --dtypes fp16 --n $L" > $o/ab.txt 2>&1
echo "ab done at ${SECONDS}s"
cat $o/ab.txt
tar -C $w -czf $o/results.tgz .
GPU_TEST_SHARDS=12 GPU_TEST_FILTER='BackwardMisalignedPointers.*:BackwardStridedRows.*:*Misaligned*:Forward*:Tuning.*:*BackwardMatrix*' \
  BUILD_DIR=$b timeout 200 scripts/gpu-run.sh gpu-tests > $o/gpu-run.txt 2>&1; echo "gpu tests exit $? at ${SECONDS}s"
grep -E "^shard|FAILED" $o/gpu-run.txt | head -30
gzip -f $o/gpu-tests.txt
SANITIZE_TOOLS=memcheck SANITIZE_FILTER_memcheck='BackwardMisalignedPointers.*:BackwardStridedRows.*:Tuning.EveryCandidateOfSmallProblems*:Forward.MatchesTheFloat64*' \
  BUILD_DIR=$b timeout 150 scripts/gpu-sanitize.sh; echo "sanitize exit $? at ${SECONDS}s"
tail -4 $o/sanitize.txt
gzip -f $o/sanitize.txt
