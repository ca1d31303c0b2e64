#!/usr/bin/env bash
# Session 13, call 10: the configs of the fused rules at 4096 (calls 3-5; call 2's racecheck ran
# before them) and 32768 under all four tools: EveryN/BackwardFewGroups.*/N4096 and N32768, and
# the fused families (their kernels at the sanitize caps).
set -uo pipefail
b=build-device; o=$OUT
scripts/gpu-environment.sh $b > $o/environment.txt 2>&1
BUILD_DIR=$b OUT=$o SANITIZE_TOOLS="racecheck memcheck initcheck synccheck" \
  SANITIZE_FILTER_racecheck='EveryN/BackwardFewGroups.*/N4096:EveryN/BackwardFewGroups.*/N32768' \
  SANITIZE_FILTER_memcheck='EveryN/BackwardFewGroups.*/N4096:EveryN/BackwardFewGroups.*/N32768' \
  SANITIZE_FILTER_initcheck='EveryN/BackwardFewGroups.*/N4096:EveryN/BackwardFewGroups.*/N32768' \
  SANITIZE_FILTER_synccheck='EveryN/BackwardFewGroups.*/N4096:EveryN/BackwardFewGroups.*/N32768' \
  TIMEOUT_racecheck=150 TIMEOUT_memcheck=100 TIMEOUT_initcheck=100 TIMEOUT_synccheck=100 WARMUP_TIMEOUT=60 \
  timeout 580 scripts/gpu-sanitize.sh | tail -7
