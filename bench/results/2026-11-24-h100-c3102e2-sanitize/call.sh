#!/usr/bin/env bash
# Session 13, call 11: memcheck, initcheck and synccheck over every EveryN/BackwardFewGroups test
# (the configs of M = 199 and 4096 at every N of the sanitize matrix and 32768, option-free and
# with the fused options, over two row groups); racecheck ran them in calls 2, 4, 7 and 10.
set -uo pipefail
b=build-device; o=$OUT
scripts/gpu-environment.sh $b > $o/environment.txt 2>&1
f='EveryN/BackwardFewGroups.*'
BUILD_DIR=$b OUT=$o SANITIZE_TOOLS="memcheck initcheck synccheck" \
  SANITIZE_FILTER_memcheck="$f" SANITIZE_FILTER_initcheck="$f" SANITIZE_FILTER_synccheck="$f" \
  TIMEOUT_memcheck=170 TIMEOUT_initcheck=170 TIMEOUT_synccheck=170 WARMUP_TIMEOUT=60 \
  timeout 590 scripts/gpu-sanitize.sh | tail -6
