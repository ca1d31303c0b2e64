#!/usr/bin/env bash
# Session 21, call 6 (working tree on 15a9ef7): 16-bit rows aligned to less held an element a
# thread a pass, refitted to exhaustive tuning (calls 2 and 5): the backward at 8 elements a
# thread up to 384 threads, the forward within 576 threads at 8, 16 or 32. A/B against 15a9ef7,
# then the GPU tests that run these configs.
set -uo pipefail
b=build-device; o=$OUT; w=$(mktemp -d)
scripts/bench-ab.sh $b/v/old $b/normjit $w \
  bwd "--graph --weights fp32 --dtypes bf16,fp16 --n 1001,2049,2561,3001,3585" \
  fwd "--forward --graph --weights fp32 --dtypes bf16,fp16 --n 5003,6001,8191,12289,16385,20001" > $o/ab.txt 2>&1
echo "ab done at ${SECONDS}s"
cat $o/ab.txt
(cd $w && tar -czf $o/results.tgz bwd-* fwd-*)
GPU_TEST_SHARDS=12 GPU_TEST_FILTER='BackwardMisalignedPointers.*:*Misaligned*:Forward.*:Tuning.*:*BackwardMatrix*' \
  BUILD_DIR=$b timeout 200 scripts/gpu-run.sh gpu-tests > $o/gpu-run.txt 2>&1; echo "gpu tests exit $? at ${SECONDS}s"
grep -E "^shard|FAILED" $o/gpu-run.txt | head -30
gzip -f $o/gpu-tests.txt
