#!/usr/bin/env bash
# Session 19, call 9: the session's configs under compute-sanitizer. BackwardFewGroups at the
# widths the fused rules changed (each many-row config over two row groups, so every block
# loops over rows at an M·N the tools afford): a plain run first (the warm-up), then memcheck
# and racecheck.
set -uo pipefail
f='EveryN/BackwardFewGroups.*/N1280:EveryN/BackwardFewGroups.*/N2560:EveryN/BackwardFewGroups.*/N5120:EveryN/BackwardFewGroups.*/N14336:EveryN/BackwardFewGroups.*/N16384'
SANITIZE_TOOLS="memcheck racecheck" SANITIZE_FILTER_memcheck="$f" SANITIZE_FILTER_racecheck="$f" \
  WARMUP_TIMEOUT=200 TIMEOUT_memcheck=150 TIMEOUT_racecheck=200 BUILD_DIR=build-device scripts/gpu-sanitize.sh
echo "gpu-sanitize exit $?"
