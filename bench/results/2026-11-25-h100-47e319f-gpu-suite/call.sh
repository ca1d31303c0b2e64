#!/usr/bin/env bash
# Session 22, call 7: every GPU test at the session's last kernel commit, memcheck over the
# misaligned-pointer tests (unguarded element loads of 2561-3301 among them), then the Python
# package's GPU tests in the time left.
set -uo pipefail
b=build-device; o=$OUT; w=$(mktemp -d)
scripts/gpu-environment.sh $b > $o/environment.txt 2>&1
GPU_TEST_SHARDS=12 BUILD_DIR=$b timeout 330 scripts/gpu-run.sh gpu-tests > $o/gpu-run.txt 2>&1; echo "gpu tests exit $? at ${SECONDS}s"
grep -E "^shard|FAILED" $o/gpu-run.txt | head -30
gzip -f $o/gpu-tests.txt
SANITIZE_TOOLS=memcheck SANITIZE_FILTER_memcheck='BackwardMisalignedPointers.*' WARMUP_TIMEOUT=60 TIMEOUT_memcheck=120 \
  BUILD_DIR=$b OUT=$o timeout 200 scripts/gpu-sanitize.sh > $o/sanitize-run.txt 2>&1; echo "sanitize exit $? at ${SECONDS}s"
tail -5 $o/sanitize-run.txt
BUILD_DIR=$b OUT=$w timeout $((585 - SECONDS)) scripts/gpu-run.sh python > $w/gpu-run-python.txt 2>&1; echo "python exit $? at ${SECONDS}s"
cp $w/python.txt $o/ 2>/dev/null; grep -E "passed|failed" $o/python.txt | tail -3
