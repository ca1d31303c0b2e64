#!/usr/bin/env bash
# Session 52, call 3 (H200). build-device at b8619ad, as call 2. 1. What call 2's 440 s left
# unrun: Tuning.PhasedRowsInEveryBlockShapeMatchTheReference and the Python tests' shard 3/4.
# 2. With the time left, a lead: `normjit tune` of 16-bit rows in phase (odd N, contiguous) of
# 519-999, which take the rules of their 2-byte alignment and were never tuned; both kinds,
# bf16 fp32 γ and fp16 fp16 γ, M = 64 Mi / N (finalists' times in tune.err).
set -uo pipefail
B=build-device
GPU_TEST_SHARDS=1 GPU_TEST_FILTER='Tuning.PhasedRowsInEveryBlockShapeMatchTheReference' BUILD_DIR=$B OUT=$OUT timeout 120 scripts/gpu-run.sh gpu-tests > $OUT/tests-run.txt 2>&1
echo "tests exit $? at $SECONDS s"; grep -E '^\[  (PASSED|FAILED|SKIPPED) |OK \]|Failure' $OUT/gpu-tests.txt | head
NORMJIT_CACHE_DIR=$(mktemp -d) NORMJIT_LIBRARY=$PWD/$B/libnormjit.so timeout 150 python3 python/tests/run.py --shard 3/4 > $OUT/python-tests.txt 2>&1
echo "python exit $? at $SECONDS s"; tail -4 $OUT/python-tests.txt
run() {  # $1 = label, rest = tune args
  local label=$1; shift
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 40 $B/normjit tune --align 2 "$@" 2>>$OUT/tune.err | grep -E "^(rms|layer)norm" | sed "s/^/$label /"
}
{
for n in 745 999 647 871 519; do
  m=$((67108864 / n))
  for k in layernorm rmsnorm; do
    run bf16f32 --kind $k --n $n --m $m --dtype bf16 --weight-dtype fp32
    run fp16f16 --kind $k --n $n --m $m --dtype fp16
  done
  [ $SECONDS -gt 300 ] && break
done
} > $OUT/tune.txt
echo "tune exit $? at $SECONDS s"
sed -E 's/x=[a-z0-9]+ dy=[a-z0-9]+ dx=[a-z0-9]+ weight=[a-z0-9]+ //; s/threads_per_row=[0-9]+ //; s/ +/ /g' $OUT/tune.txt | cut -c1-200
