#!/usr/bin/env bash
# Call K of session 8: initcheck over the sanitize matrix, synccheck over it and every
# shared-sums candidate (the other two tools of call J).
set -uo pipefail
BUILD_DIR=build-device SANITIZE_TOOLS="initcheck synccheck" \
  SANITIZE_FILTER_initcheck='AllVariants/BackwardMatrix.*' \
  SANITIZE_FILTER_synccheck='AllVariants/BackwardMatrix.*:BackwardSharedSums.EverySharedSumsCandidateMatchesTheReference' \
  scripts/gpu-sanitize.sh > /dev/null 2>&1
echo "gpu-sanitize rc=$?"
grep -E "^sanitize:" "$OUT/sanitize.txt" | tail -6
