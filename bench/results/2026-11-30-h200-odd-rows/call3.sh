#!/usr/bin/env bash
# Session 51, call 3 (H200). build-device at 06a5bf2 (short_rows_in_phase_config); v/old = bd2ae45's
# normjit (the rules before). 1. The phased and layout GPU tests (BackwardPhasedRows now at many
# rows of 1537-4607). 2. A/B old -> new, bench --graph (M·N = 64 Mi, contiguous odd rows: in
# phase), two rounds: 1001-5119 and the control 5501.
set -uo pipefail
B=build-device
export NORMJIT_CACHE_DIR=$(mktemp -d)
GPU_TEST_SHARDS=8 GPU_TEST_FILTER='*Phased*:*BackwardMisaligned*:*BackwardLayout*' BUILD_DIR=$B OUT=$OUT timeout 150 scripts/gpu-run.sh gpu-tests > $OUT/tests-run.txt 2>&1
echo "tests exit $? at $SECONDS s"
grep -E '^\[  (PASSED|FAILED|SKIPPED) |Failure' $OUT/gpu-tests.txt | sort | uniq -c | head -30
grep -A8 Failure $OUT/gpu-tests.txt | head -40; grep -E "OK \] " $OUT/gpu-tests.txt | head -20
mkdir -p $OUT/ab
N=1001,1537,2001,2047,2049,2559,3001,3583,4095,4097,4607,4999,5003,5119,5501
scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab \
  rms-bf16 "--graph --kinds rmsnorm --dtypes bf16 --weights fp32,same --n $N" \
  ln-bf16 "--graph --kinds layernorm --dtypes bf16 --weights fp32,same --n $N" \
  fp16 "--graph --kinds rmsnorm,layernorm --dtypes fp16 --weights fp32 --n $N" > $OUT/ab.txt 2>&1
echo "ab exit $? at $SECONDS s"; grep -E "^(layer|rms)|median" $OUT/ab.txt | sed -E 's/threads_per_row=[0-9]+ //; s/registers //; s/shared_weights //' | cut -c1-170
tar czf $OUT/call3-logs.tgz -C $OUT ab ab.txt gpu-tests.txt tests-run.txt 2>/dev/null; rm -rf $OUT/ab
