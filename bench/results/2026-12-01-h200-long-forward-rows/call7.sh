#!/usr/bin/env bash
# Session 61, call 7 (H200). build-device: 200cd60 (LayerNorm's streamed rule bounded to 98304;
# the GPU test's new shape fixed: call 6's asserted that LN fp16 40960 changed, which the H100's
# rules already stream that way, and stopped before the rule's 98304).
# GPU tests: the forward (Forward*, ForwardTuning.*, the fused forward).
set -uo pipefail
B=build-device
mkdir -p $OUT/logs
GPU_TEST_SHARDS=6 GPU_TEST_FILTER='Forward*:ForwardTuning.*:*ForwardFused*' BUILD_DIR=$B OUT=$OUT/logs timeout 200 scripts/gpu-run.sh gpu-tests > $OUT/logs/tests-run.txt 2>&1
echo "tests exit $? at $SECONDS s"
grep -hE '^\[  (PASSED|FAILED|SKIPPED) ' $OUT/logs/gpu-tests*.txt | sort | uniq -c | head; grep -hE '^\[  FAILED  \]' $OUT/logs/gpu-tests*.txt | head; grep -h -B2 -A8 'Failure' $OUT/logs/gpu-tests*.txt | head -30
grep -hE '^\[ +OK \]' $OUT/logs/gpu-tests*.txt
tar czf $OUT/call7.tgz -C $OUT logs && rm -rf $OUT/logs
