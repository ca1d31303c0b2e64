#!/usr/bin/env bash
# Session 59, call 7 (H200), the rest of the device time. build-device: the final code (as call 6).
# 1. The whole GPU suite, 16 shards.
# 2. A/B old vs new at the one shape the standing read slower twice (the fused backward's RMS
#    bf16 fp32 γ 4095 gate, 0.96x; config and PTX unchanged but for an unused constant's symbol).
set -uo pipefail
B=build-device
GPU_TEST_SHARDS=16 BUILD_DIR=$B OUT=$OUT timeout 400 scripts/gpu-run.sh gpu-tests > $OUT/tests-run.txt 2>&1
echo "tests exit $? at $SECONDS s"
grep -hE '^\[  (PASSED|FAILED|SKIPPED) ' $OUT/gpu-tests*.txt | sort | uniq -c | head; grep -h -B2 -A8 'Failure' $OUT/gpu-tests*.txt | head -40
grep -h "tests from .* ran\|SKIPPED \]" $OUT/gpu-tests*.txt | awk '{s+=$2} END {print "tests ran:", s}'
mkdir -p $OUT/ab
scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab gate "--graph --kinds rmsnorm --n 4095 --dtypes bf16 --weights fp32 --fused gate" > $OUT/ab/ab.txt 2>&1
echo "ab at $SECONDS s"; grep -h "gate" $OUT/ab/ab.txt | cut -c1-120
mkdir -p $OUT/logs && mv $OUT/gpu-tests*.txt $OUT/tests-run.txt $OUT/ab $OUT/logs/ 2>/dev/null
tar czf $OUT/call7.tgz -C $OUT logs && rm -rf $OUT/logs
