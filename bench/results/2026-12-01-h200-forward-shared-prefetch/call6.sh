#!/usr/bin/env bash
# Session 62, call 6 (H200). build-device: d87639e (as call 5). The standing sweep of both passes
# and the fused options against session 61's standing (bench/results/2026-12-01-h200-long-forward-
# rows/standing/, the new baseline its note asked for). The device time left (378 s) allows this
# alone: call 5's whole suite stopped at its 420 s limit with two tests of shard 10 unfinished.
set -uo pipefail
B=build-device
mkdir -p $OUT/logs $OUT/standing
BENCH_TIMEOUT=200 BUILD_DIR=$B OUT=$OUT/standing timeout 285 scripts/gpu-standing.sh bench/results/2026-12-01-h200-long-forward-rows/standing > $OUT/logs/standing-run.txt 2>&1
echo "standing exit $? at $SECONDS s"; tail -45 $OUT/standing/standing-check.txt
tar czf $OUT/call6.tgz -C $OUT logs standing && rm -rf $OUT/logs $OUT/standing
