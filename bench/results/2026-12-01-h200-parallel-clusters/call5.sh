#!/usr/bin/env bash
# Session 60, call 5 (H200). build-device: call 4's code, and BackwardSharedSums's candidates test
# split a case a problem (it took 295 s of one shard in call 4, whose 400 s limit then stopped
# that shard before its last test). Runs the split cases and that last test,
# AllVariants/BackwardMatrix...RMSNorm_f32_NoAffine, in 16 shards.
set -uo pipefail
B=build-device
GPU_TEST_SHARDS=16 GPU_TEST_FILTER='*SharedSums*:AllVariants/BackwardMatrix.MatchesFloat64ReferenceForEveryShape/RMSNorm_f32_NoAffine' \
  BUILD_DIR=$B OUT=$OUT timeout 300 scripts/gpu-run.sh gpu-tests > $OUT/tests-run.txt 2>&1
echo "tests exit $? at $SECONDS s"
grep -hE '^\[  (PASSED|FAILED|SKIPPED) ' $OUT/gpu-tests*.txt | sort | uniq -c | head; grep -h -B2 -A8 'Failure' $OUT/gpu-tests*.txt | head -40
grep -hE '^\[       OK \]' $OUT/gpu-tests*.txt | sed 's/.*\] //' | sort -t'(' -k2 -n | tail -25
mkdir -p $OUT/logs && mv $OUT/gpu-tests*.txt $OUT/tests-run.txt $OUT/logs/ 2>/dev/null
tar czf $OUT/call5.tgz -C $OUT logs && rm -rf $OUT/logs
