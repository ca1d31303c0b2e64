#!/usr/bin/env bash
# Session 53, call 6 (H200). build-device = 2da7e26 plus S.diff (uncommitted: LayerNorm's element
# blocks of 64 threads held to 96 registers, 10 an SM, in place of 128 and 8; fp16's blocks of 96
# (1025-1536) 6 an SM at 96 registers, in place of none: 4 at 143-151 registers); v/old =
# 2da7e26's normjit. 1. A/B, bench --graph, M·N = 64 Mi, two rounds. 2. BackwardFewGroups at 935,
# 1021 and 1201 with S.
set -uo pipefail
B=build-device
scripts/gpu-environment.sh $B > $OUT/environment.txt 2>&1
mkdir -p $OUT/ab
scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab \
  ln64 "--graph --kinds layernorm --dtypes bf16,fp16 --weights fp32,same --n 801,871,935,1001,1021" \
  ln96 "--graph --kinds layernorm --dtypes fp16 --weights fp32,same --n 1025,1153,1201,1281,1409,1473,1535" > $OUT/ab.txt 2>&1
echo "ab exit $? at $SECONDS s"
GPU_TEST_SHARDS=6 GPU_TEST_FILTER='EveryN/BackwardFewGroups.*/N1201:EveryN/BackwardFewGroups.*/N935:EveryN/BackwardFewGroups.*/N1021' \
  BUILD_DIR=$B OUT=$OUT timeout 100 scripts/gpu-run.sh gpu-tests > $OUT/tests-run.txt 2>&1
echo "tests exit $? at $SECONDS s"; grep -hE '^\[  (PASSED|FAILED|SKIPPED) |OK \]|Failure' $OUT/gpu-tests*.txt | head -20
grep -E "^(layer|rms)|median" $OUT/ab.txt | sed -E 's/threads_per_row=[0-9]+ //; s/registers //; s/shared_weights //' | cut -c1-130
tar czf $OUT/call6-logs.tgz -C $OUT ab 2>/dev/null; rm -rf $OUT/ab
