#!/usr/bin/env bash
# Session 13, call 1 (77d5fe0): BackwardFewGroups (the configs of M = 199 and 4096, option-free
# and fused, over two row groups) plain as gpu-sanitize.sh's warm-up, then under racecheck.
set -uo pipefail
b=build-device; o=$OUT
scripts/gpu-environment.sh $b > $o/environment.txt 2>&1
BUILD_DIR=$b OUT=$o SANITIZE_TOOLS=racecheck SANITIZE_FILTER_racecheck='BackwardFewGroups.*' \
  TIMEOUT_racecheck=370 WARMUP_TIMEOUT=180 timeout 580 scripts/gpu-sanitize.sh | tail -5
grep -E "^\[  FAILED|hazard|RACECHECK SUMMARY" $o/sanitize.txt | sort | uniq -c | head -20
