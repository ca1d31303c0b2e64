#!/usr/bin/env bash
# Session 45, call 5 (H200). build-device = dae4f23. Call 4's memcheck ran out of time in the
# fused tests' warm-up (its default filter needs more than a call; 7 fused/few-groups tests
# passed under memcheck with no error before the limit). Here the families call 3 did not cover:
# few row groups, the grid cluster (not a dependent launch: its kernel waits at its top for
# nothing), the phased rows of both passes.
set -uo pipefail
B=build-device
SANITIZE_TOOLS=memcheck SANITIZE_FILTER_memcheck='*BackwardFewGroups*:BackwardGridCluster*:BackwardPhasedRows.*:ForwardTuning.PhasedRowsMatchTheReference' \
  WARMUP_TIMEOUT=90 TIMEOUT_memcheck=150 BUILD_DIR=$B OUT=$OUT timeout 260 scripts/gpu-sanitize.sh > $OUT/sanitize-run.txt 2>&1
echo "memcheck exit $? at $SECONDS s"; tail -3 $OUT/sanitize.txt
gzip -f $OUT/sanitize.txt
