#!/usr/bin/env bash
# Session 55, call 1 (H200). build-device = 1576b1f's build (session 54's final code, with the
# forward's stores unfolded). The standing sweep of both passes and of the fused options
# (scripts/gpu-standing.sh, no baseline: this run is the baseline the next sessions check
# against).
set -uo pipefail
B=build-device
scripts/gpu-environment.sh $B > $OUT/environment.txt 2>&1
BENCH_TIMEOUT=250 BUILD_DIR=$B OUT=$OUT timeout 570 scripts/gpu-standing.sh
echo "standing exit $? at $SECONDS s"
for f in $OUT/standing-*.txt; do echo "== $f"; grep -cE '^(layer|rms)' $f; done
