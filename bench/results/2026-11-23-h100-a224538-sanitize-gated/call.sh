#!/usr/bin/env bash
# Call G: compute-sanitizer over the fused-option tests the last sessions could not cover:
# racecheck over the gated tests (every family, both gate orders: never run before), memcheck
# over the fused, gated and parallel tests (session 6's run ran out of time in its warm-up).
set -uo pipefail
export OUT BUILD_DIR=build-device
{ echo "date: $(date -u +%FT%TZ)"; echo "commit: $(cat build-device/COMMIT)"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } > $OUT/environment.txt
cat $OUT/environment.txt
SANITIZE_TOOLS="racecheck memcheck" \
SANITIZE_FILTER_racecheck='*BackwardGated*' \
SANITIZE_FILTER_memcheck='*BackwardFused*:*BackwardGated*:*BackwardParallel*' \
WARMUP_TIMEOUT=250 TIMEOUT_racecheck=200 TIMEOUT_memcheck=120 \
  scripts/gpu-sanitize.sh > /dev/null 2>&1
echo "gpu-sanitize exit $?"
grep -E "^sanitize:|^warm-up|ERROR SUMMARY|RACECHECK SUMMARY|tests? ran|PASSED|FAILED" $OUT/sanitize.txt | head -30
