#!/usr/bin/env bash
# Session 51, call 4 (H200). build-device at 3e577c5 (the short rows in phase, and the gate after
# the norm at 10241-12288 in bf16 with fp32 γ in one block of 8-byte vectors); v/old = 06a5bf2's
# normjit (the short rows in phase alone). 1. A/B of the gate's block, bench --graph, two rounds.
# 2. The whole GPU suite, 16 shards.
set -uo pipefail
B=build-device
export NORMJIT_CACHE_DIR=$(mktemp -d)
mkdir -p $OUT/ab
scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab \
  gate "--graph --kinds rmsnorm --dtypes bf16 --weights fp32 --n 10240,10241,10752,11264,11776,12288,12289 --fused gate,gate-before" > $OUT/ab.txt 2>&1
echo "ab exit $? at $SECONDS s"; grep -E "^(layer|rms)|median" $OUT/ab.txt | grep -v " none " | sed -E 's/threads_per_row=[0-9]+ //; s/registers //; s/shared_weights //' | cut -c1-170
GPU_TEST_SHARDS=16 BUILD_DIR=$B OUT=$OUT timeout 460 scripts/gpu-run.sh gpu-tests > $OUT/tests-run.txt 2>&1
echo "tests exit $? at $SECONDS s"
grep -E '^\[  (PASSED|FAILED|SKIPPED) ' $OUT/gpu-tests.txt | sort | uniq -c | head; grep -cE '^\[       OK' $OUT/gpu-tests.txt
grep -E '^\[  FAILED' $OUT/gpu-tests.txt | head; grep -A8 Failure $OUT/gpu-tests.txt | head -40; tail -5 $OUT/tests-run.txt
gzip -f $OUT/gpu-tests.txt
tar czf $OUT/call4-logs.tgz -C $OUT ab ab.txt tests-run.txt 2>/dev/null; rm -rf $OUT/ab
