#!/usr/bin/env bash
# Session 50, call 4 (H200). build-device at the final gate rule (fp16 after the norm keeps its
# clusters to 34816: calls 2-3's two losses). The whole GPU suite, 16 shards.
set -uo pipefail
B=build-device
GPU_TEST_SHARDS=16 BUILD_DIR=$B OUT=$OUT timeout 560 scripts/gpu-run.sh gpu-tests > $OUT/tests-run.txt 2>&1
echo "tests exit $? at $SECONDS s"; grep -E '^\[  (PASSED|FAILED|SKIPPED) |Failure' $OUT/gpu-tests.txt | sort | uniq -c | head -30
grep -A8 Failure $OUT/gpu-tests.txt | head -40; grep -E "^shard" $OUT/tests-run.txt | cut -c1-200
tar czf $OUT/call4-logs.tgz -C $OUT tests-run.txt 2>/dev/null; gzip -k $OUT/gpu-tests.txt
