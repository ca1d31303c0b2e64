#!/usr/bin/env bash
# Session 33, call 1 (H200). build-device/normjit = main with bf16 widened a 32-bit word at a
# time (templates/common.cuh widen_piece: one LOP3 or one shift an element where ptxas had
# PRMT + shift, often + a move; static SASS 2-12% fewer instructions in bf16 kernels, no
# register or spill change over 112 kernels). build-device/v/old = c602b9c (main before it).
#  1. A/B old vs new: backward bf16 (fp32 and bf16 γ), forward bf16, the gate.
#  2. Exhaustive tuning of the gate (NOTES 45, next 1-2) and of LN/RMS bf16 long rows with the
#     new binary (are the rules still the best there once the widening is cheaper?).
#  3. The Python package's GPU tests (not run in session 32).
set -uo pipefail
B=build-device
mkdir -p $OUT/ab
timeout 230 scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab \
  bwd "--graph --dtypes bf16 --weights fp32 --n 1024,2048,4096,5003,8192,12288,16384,32768,65536,262144" \
  bwd16 "--graph --dtypes bf16 --weights same --n 4096,8192,16384" \
  fwd "--forward --graph --dtypes bf16 --weights fp32 --n 2048,4096,5003,8192,16384,32768,65536" \
  gate "--graph --kinds rmsnorm --weights fp32 --fused gate,gate-before --dtypes bf16 --n 4096,8192,16384" > $OUT/ab.txt 2>&1
echo "ab: exit $? at $SECONDS s"; grep -E "median" $OUT/ab.txt | head
BUILD_DIR=$B timeout 150 scripts/tune-compare.sh $OUT/gate --until 90 \
  rmsnorm:bf16:{1536,2048,3072,5120,6144,7168}:gate-before rmsnorm:bf16:{2048,3072,20480,24576}:gate \
  rmsnorm:fp16:{2048,6144,12288}:gate > /dev/null 2>&1
echo "gate tune-compare: exit $? at $SECONDS s"; tail -3 $OUT/gate/compare.txt
BUILD_DIR=$B timeout 100 scripts/tune-compare.sh $OUT/long --until 60 \
  layernorm:bf16:{14336,16384,32768,65536} rmsnorm:bf16:{32768,65536} > /dev/null 2>&1
echo "long tune-compare: exit $? at $SECONDS s"; tail -3 $OUT/long/compare.txt
BUILD_DIR=$B OUT=$OUT timeout $((590 - SECONDS)) scripts/gpu-python.sh > $OUT/python-run.txt 2>&1
echo "python: exit $? at $SECONDS s"; grep -E "^python:|curves|=====.*exit|passed|failed" $OUT/python.txt | head -20
tar -C $OUT -czf $OUT/logs.tgz ab gate long && rm -rf $OUT/ab $OUT/gate $OUT/long
