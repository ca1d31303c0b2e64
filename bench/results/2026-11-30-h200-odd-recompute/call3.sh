#!/usr/bin/env bash
# Session 56, call 3 (H200). build-device: call 2's marks, and recover_slot without a branch on
# whether the row exists (each slot's y load had sunk behind it: LN bf16 4095 waited a memory trip
# a slot). v/old = 46e7ee6 (call 1's).
# 1. The recompute's and fused GPU tests.
# 2. Configs beside the heuristic on the new code (LN/RMS recompute 4095).
# 3. A/B old against new, recompute at odd and aligned N, two rounds.
set -uo pipefail
B=build-device
GPU_TEST_SHARDS=16 GPU_TEST_FILTER='BackwardRecompute.*:BackwardFused*' BUILD_DIR=$B OUT=$OUT timeout 200 scripts/gpu-run.sh gpu-tests > $OUT/tests-run.txt 2>&1
echo "tests exit $? at $SECONDS s"; tail -3 $OUT/tests-run.txt
grep -hE '^\[  (PASSED|FAILED|SKIPPED) ' $OUT/gpu-tests*.txt | sort | uniq -c | head; grep -h -B2 -A8 'Failure' $OUT/gpu-tests*.txt | head -40
P="--dtype bf16 --weight-dtype fp32 --n 4095 --align 2 --m 16388"
for kind in layernorm rmsnorm; do
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 60 $B/normjit tune --kind $kind $P --recompute-from-output \
    --config "threads=256 threads_per_row=256 vec=1 registers min_blocks=2" \
    --config "threads=256 threads_per_row=256 vec=1 registers prefetch min_blocks=2" \
    --config "threads=512 threads_per_row=512 vec=1 registers min_blocks=2" >> $OUT/configs.txt 2>&1
  echo "configs $kind exit $? at $SECONDS s"
done
grep "config \| M<=" $OUT/configs.txt | cut -c1-200
mkdir -p $OUT/ab
timeout 330 scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab \
  bf16 "--graph --dtypes bf16 --weights fp32 --n 1001,2050,4095,5003,8192,12289 --fused none,recompute" \
  fp32 "--graph --dtypes fp32 --n 1001,4095,8192,12289,65536 --fused none,recompute" > $OUT/ab.txt 2>&1
echo "ab exit $? at $SECONDS s"
grep -E "recompute|median" $OUT/ab.txt | cut -c1-110
mkdir -p $OUT/logs && mv $OUT/gpu-tests*.txt $OUT/tests-run.txt $OUT/ab $OUT/configs.txt $OUT/logs/ 2>/dev/null
tar czf $OUT/call3.tgz -C $OUT logs && rm -rf $OUT/logs
