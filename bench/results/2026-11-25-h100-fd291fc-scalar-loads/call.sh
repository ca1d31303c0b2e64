#!/usr/bin/env bash
# Session 22, call 3: backward slots of an element load without a branch (this commit) against
# 0c616ff (v/old) at the shapes whose heuristic holds rows an element a thread a pass; then
# v/new16 (this commit with the bf16 8-a-thread rule off) against the rule at bf16 2049-3001;
# then every GPU test.
set -uo pipefail
b=build-device; o=$OUT; w=$(mktemp -d)
scripts/bench-ab.sh $b/v/old $b/normjit $w \
  s16 "--graph --weights fp32 --dtypes bf16,fp16 --n 1001,2049,2561,3001,4095" \
  s32 "--graph --weights fp32 --dtypes fp32 --n 1001,3001,5003,65537" > $o/ab.txt 2>&1
echo "ab done at ${SECONDS}s"
scripts/bench-ab.sh $b/normjit $b/v/new16 $w \
  rule "--graph --weights fp32 --dtypes bf16 --n 2049,2561,3001" > $o/ab-new16.txt 2>&1
echo "ab-new16 done at ${SECONDS}s"
cat $o/ab.txt $o/ab-new16.txt
(cd $w && tar -czf $o/results.tgz s16-* s32-* rule-*)
GPU_TEST_SHARDS=12 BUILD_DIR=$b timeout 330 scripts/gpu-run.sh gpu-tests > $o/gpu-run.txt 2>&1; echo "gpu tests exit $? at ${SECONDS}s"
grep -E "^shard|FAILED" $o/gpu-run.txt | head -30
gzip -f $o/gpu-tests.txt
