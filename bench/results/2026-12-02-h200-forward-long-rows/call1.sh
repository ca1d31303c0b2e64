#!/usr/bin/env bash
# Session 65, call 1 (H200). build-device: the candidate rule (uncommitted on 9f8d1b8):
# fp32 rows past the wide blocks (RMSNorm beyond 196608, LayerNorm beyond 163840) take
# register clusters of 8 with γ held at every m (kRichLongRowsFrom 128 → 1), and their blocks
# of 896 threads or wider take the whole 1024. v/old: 9f8d1b8 (from bucket 128, exact widths).
# 1. A/B old against the candidate, two rounds, at 1-256 rows and at M·N = 64 Mi.
# 2. Pinned 1024-thread clusters of 8 where the candidate keeps the exact width (below 896).
# 3. The forward GPU tests on the candidate.
set -uo pipefail
B=build-device
L=$OUT/logs
mkdir -p $L/ab
ms=1,4,16,24,32,48,64,96,128,256
timeout 300 scripts/bench-ab.sh $B/v/old $B/normjit $L/ab \
  rms "--forward --graph --kinds rmsnorm --dtypes fp32 --n 200704,212992,221184,225280,229376,237568,245760,262144 --m $ms" \
  ln "--forward --graph --kinds layernorm --dtypes fp32 --n 167936,180224,196608,212992,221184,229376,245760,262144 --m $ms" \
  big "--forward --graph --dtypes fp32 --n 167936,196608,212992,221184,229376,245760,262144" \
  > $L/ab/ab.txt 2>&1
echo "ab at ${SECONDS}s"; grep -iE "median|exited|no JSON" $L/ab/ab.txt
PIN_TIMEOUT=100 scripts/bench-pin.sh $L pin "--forward --dtypes fp32 --n 172032,196608,204800,212992,221184 --m 16,32,64,128,292" \
  "threads=1024 threads_per_row=1024 vec=4 registers cluster=8 shared_weights" > $L/pin-rows.txt
head -1 $L/pin-rows.txt
GPU_TEST_SHARDS=16 GPU_TEST_FILTER='*Forward*' BUILD_DIR=$B OUT=$L/tests timeout 200 scripts/gpu-run.sh gpu-tests > $OUT/tests.txt 2>&1
echo "tests rc $? at ${SECONDS}s"; tail -20 $OUT/tests.txt
tar czf $OUT/call1.tgz -C $OUT logs && rm -rf $L
