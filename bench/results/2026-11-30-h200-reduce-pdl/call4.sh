#!/usr/bin/env bash
# Session 45, call 4 (H200). build-device = dae4f23 (as calls 2-3). compute-sanitizer's memcheck
# over its whole default filter (the sanitize matrix, fused, grid, few-groups and phased tests),
# as every kernel's entry changed (griddepcontrol.wait at the top), and the dependent-launch test.
set -uo pipefail
B=build-device
SANITIZE_TOOLS=memcheck BUILD_DIR=$B OUT=$OUT timeout 420 scripts/gpu-sanitize.sh > $OUT/sanitize-run.txt 2>&1
echo "memcheck exit $? at $SECONDS s"; tail -3 $OUT/sanitize.txt
gzip -f $OUT/sanitize.txt
