#!/usr/bin/env bash
# Session 22, call 1 (0c616ff): row addresses once a row. A/B against 4a5b6a9 (v/old) over the
# kernels whose PTX changed (backward: scalar and packed 16-bit rows, fp32 rows at 4-byte
# alignment; forward: nearly every kernel, y's row pointer), then bf16 rows of 2049-3001 at
# 16 elements a thread (v/new16: 0c616ff with the bf16 8-a-thread rule off) against the rule.
set -uo pipefail
b=build-device; o=$OUT; w=$(mktemp -d)
scripts/bench-ab.sh $b/v/old $b/normjit $w \
  bwd16 "--graph --weights fp32 --dtypes bf16,fp16 --n 1001,1024,1536,3001,16384,16385,32769,65537" \
  bwd32 "--graph --weights fp32 --dtypes fp32 --n 1001,3001,5003,65537" \
  fwd "--forward --graph --weights fp32 --dtypes bf16,fp32 --n 256,1001,1024,4096,8192,16384,32769,65537,262144,1048576" > $o/ab.txt 2>&1
echo "ab done at ${SECONDS}s"
scripts/bench-ab.sh $b/normjit $b/v/new16 $w \
  scalar16 "--graph --weights fp32 --dtypes bf16 --n 2049,2561,3001" > $o/ab-new16.txt 2>&1
echo "ab-new16 done at ${SECONDS}s"
cat $o/ab.txt $o/ab-new16.txt
(cd $w && tar -czf $o/results.tgz bwd16-* bwd32-* fwd-* scalar16-*)
