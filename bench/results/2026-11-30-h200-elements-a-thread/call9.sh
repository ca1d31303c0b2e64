#!/usr/bin/env bash
# Session 49, call 9 (H200), the last of the device time. build-device at HEAD's kernels (the
# gate's changes and rules). memcheck over the gated tests (both orders; their configs at
# 65536 are the new rule's), as far as the time allows.
set -uo pipefail
SANITIZE_TOOLS="memcheck" SANITIZE_FILTER_memcheck='*BackwardGated*' TIMEOUT_memcheck=110 WARMUP_TIMEOUT=40 \
  BUILD_DIR=build-device OUT=$OUT scripts/gpu-sanitize.sh > $OUT/sanitize-run.txt 2>&1
echo "sanitize exit $? at $SECONDS s"; tail -5 $OUT/sanitize.txt; grep -cE "^\[       OK \]" $OUT/sanitize.txt
