#!/usr/bin/env bash
# Session 21, call 3 (working tree on 52f1fdf): realigned slots only where the heuristic takes
# them (16-bit rows aligned to less, N >= 16385) and in tuning candidates; A/B at long odd rows
# against 52f1fdf, then every GPU test.
set -uo pipefail
b=build-device; o=$OUT; w=$(mktemp -d)
L=16385,24577,32769,65537,131073,262145,1048577
scripts/bench-ab.sh $b/v/old $b/normjit $w \
  bwd "--graph --weights fp32 --dtypes bf16 --n $L" \
  fwd "--forward --graph --weights fp32 --dtypes bf16 --n $L" > $o/ab.txt 2>&1
echo "ab done at ${SECONDS}s"
cat $o/ab.txt
tar -C $w -czf $o/results.tgz .
GPU_TEST_SHARDS=12 BUILD_DIR=$b timeout 380 scripts/gpu-run.sh gpu-tests > $o/gpu-run.txt 2>&1; echo "gpu tests exit $? at ${SECONDS}s"
grep -E "^shard|FAILED" $o/gpu-run.txt | head -40
gzip -f $o/gpu-tests.txt
