#!/usr/bin/env bash
# Session 63, call 4 (H200). build-device: 64773a9 (this session's forward rules, final). The
# whole GPU suite in 16 shards (session 62's call 5 ran past 420 s: given 560 here).
set -uo pipefail
B=build-device
mkdir -p $OUT/logs
GPU_TEST_SHARDS=16 BUILD_DIR=$B OUT=$OUT/logs timeout 560 scripts/gpu-run.sh gpu-tests > $OUT/logs/tests-run.txt 2>&1
echo "tests exit $? at $SECONDS s"
grep -hE '^\[  (PASSED|FAILED|SKIPPED) ' $OUT/logs/gpu-tests*.txt | sort | uniq -c | head; grep -hE '^\[  FAILED  \]' $OUT/logs/gpu-tests*.txt | head; grep -h -B2 -A8 'Failure' $OUT/logs/gpu-tests*.txt | head -30
grep -c '^\[       OK \]' $OUT/logs/gpu-tests.txt; grep -E '^\[ +SKIPPED \]' $OUT/logs/gpu-tests.txt | head
tar czf $OUT/call4.tgz -C $OUT logs && rm -rf $OUT/logs
