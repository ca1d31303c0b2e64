#!/usr/bin/env bash
# Session 53, call 2 (H200). build-device at the commit of the rules (COMMIT in environment.txt);
# v/old = 7539da8's normjit (the session's start). 1. A/B, bench --graph, M·N = 64 Mi, two rounds:
# LayerNorm aligned 1024-7168 (paired rows and the prefetching blocks kept), LayerNorm's rows in
# phase 801-2047 (blocks of 64 held to 128 registers, of 96-128 prefetching), RMSNorm's rows in
# phase 1017-1023; bf16 and fp16, fp32 and 16-bit γ (RMSNorm bf16 fp32 γ and fp16 fp16 γ).
# 2. BackwardFewGroups at the new N (935, 1021, 1024, 1201, 1536, 1901, 6656).
set -uo pipefail
B=build-device
scripts/gpu-environment.sh $B > $OUT/environment.txt 2>&1
mkdir -p $OUT/ab
scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab \
  lnA "--graph --kinds layernorm --dtypes bf16,fp16 --weights fp32,same --n 1024,1536,2048,3072,3584,4096,5120,6144,6656,7168" \
  lnO "--graph --kinds layernorm --dtypes bf16,fp16 --weights fp32,same --n 801,871,903,935,951,1001,1021,1201,1409,1537,1793,1901,2047" \
  rms "--graph --kinds rmsnorm --dtypes bf16,fp16 --weights fp32 --n 1017,1018,1019,1021,1023" > $OUT/ab.txt 2>&1
echo "ab exit $? at $SECONDS s"
GPU_TEST_SHARDS=8 GPU_TEST_FILTER='EveryN/BackwardFewGroups.*/N935:EveryN/BackwardFewGroups.*/N1021:EveryN/BackwardFewGroups.*/N1024:EveryN/BackwardFewGroups.*/N1201:EveryN/BackwardFewGroups.*/N1536:EveryN/BackwardFewGroups.*/N1901:EveryN/BackwardFewGroups.*/N6656' \
  BUILD_DIR=$B OUT=$OUT timeout 200 scripts/gpu-run.sh gpu-tests > $OUT/tests-run.txt 2>&1
echo "tests exit $? at $SECONDS s"; grep -hE '^\[  (PASSED|FAILED|SKIPPED) |OK \]|Failure' $OUT/gpu-tests*.txt | head -30
grep -E "^(layer|rms)|median" $OUT/ab.txt | sed -E 's/threads_per_row=[0-9]+ //; s/registers //; s/shared_weights //' | cut -c1-160
tar czf $OUT/call2-logs.tgz -C $OUT ab 2>/dev/null; rm -rf $OUT/ab
