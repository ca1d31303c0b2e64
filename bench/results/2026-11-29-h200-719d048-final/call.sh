#!/usr/bin/env bash
# Session 33, call 3 (H200). build-device/normjit = main with call 2's tuning taken into the gate's
# rules (before the norm: shared sums at 2048 and, in fp16, at 2561-3072; in bf16 a pair of
# blocks of 16 at 16385-24576). build-device/v/old = 34d0d11 (call 2's binary).
# build-device/v/sw = 34d0d11 + γ in shared memory for 16-bit rows with 16-bit γ in one block an
# SM (with_shared_weights; 8704-14848 option-free, to 16384 with the residual): LN 16-bit
# same-dtype γ at 12288 read 73-81% of copy where fp32 γ (held) reads 89%; fp16 spilled 36 bytes.
#  1. Every GPU test.
#  2. A/B of the gate before the norm across the moved ranges; A/B of v/sw against main.
#  3. The forward sweep (issue 9's standing; its kernels changed by dfa438f's widening only).
set -uo pipefail
B=build-device
NB="--graph --kinds rmsnorm --weights fp32 --fused gate-before"
GPU_TEST_SHARDS=16 BUILD_DIR=$B OUT=$OUT timeout 360 scripts/gpu-run.sh gpu-tests > $OUT/gpu-run.txt 2>&1
echo "GPU tests: exit $? at $SECONDS s"; grep -hE "^\[  (PASSED|FAILED) " $OUT/gpu-tests.txt | sort | uniq -c | head; grep -E "^\[  FAILED  \]" $OUT/gpu-tests.txt | head -20
mkdir -p $OUT/ab
timeout 150 scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab \
  before "$NB --dtypes bf16 --n 2048,16392,20480,24576" before16 "$NB --dtypes fp16 --n 2048,3072" > $OUT/ab.txt 2>&1
echo "ab: exit $? at $SECONDS s"; grep -E "median" $OUT/ab.txt | head
mkdir -p $OUT/ab-sw
timeout $((570 - SECONDS)) scripts/bench-ab.sh $B/normjit $B/v/sw $OUT/ab-sw \
  sw "--graph --weights same --dtypes bf16,fp16 --n 9216,12288,14848" \
  swres "--graph --weights same --dtypes bf16 --kinds layernorm --fused residual --n 12288,16384" > $OUT/ab-sw.txt 2>&1
echo "ab-sw: exit $? at $SECONDS s"; grep -E "median" $OUT/ab-sw.txt | head
NORMJIT_CACHE_DIR=$(mktemp -d) timeout $((590 - SECONDS)) $B/normjit bench --forward --graph --json $OUT/bench-forward.json > $OUT/bench-forward.txt 2>&1
echo "bench forward: exit $? at $SECONDS s"
tar -C $OUT -czf $OUT/logs.tgz ab ab-sw gpu-tests.txt environment.txt && rm -rf $OUT/ab $OUT/ab-sw $OUT/gpu-tests.txt $OUT/environment.txt
