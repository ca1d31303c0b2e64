#!/usr/bin/env bash
# Call J of session 8: compute-sanitizer memcheck and racecheck over the sanitize matrix with
# session 8's kernels (shared-sums clusters at few rows; the ColumnSums refactor of the
# registers and staged families), memcheck also over every shared-sums candidate.
set -uo pipefail
BUILD_DIR=build-device SANITIZE_TOOLS="memcheck racecheck" \
  SANITIZE_FILTER_memcheck='AllVariants/BackwardMatrix.*:BackwardSharedSums.EverySharedSumsCandidateMatchesTheReference' \
  SANITIZE_FILTER_racecheck='AllVariants/BackwardMatrix.*' TIMEOUT_racecheck=200 \
  scripts/gpu-sanitize.sh > /dev/null 2>&1
echo "gpu-sanitize rc=$?"
grep -E "^sanitize:|ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/sanitize.txt" | tail -8
