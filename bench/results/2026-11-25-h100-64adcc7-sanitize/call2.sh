#!/usr/bin/env bash
# Session 20, call 9 (call.sh's sanitizer step ran out of time in its warm-up: the default
# filter outlasts a call): BackwardFewGroups at the widths whose many-row configs hold γ in
# shared memory (14336: one block an SM; 32768, 65536: clusters; every dtype the test runs),
# each over two row groups: a plain run first, then memcheck and racecheck.
set -uo pipefail
f='EveryN/BackwardFewGroups.*/N14336:EveryN/BackwardFewGroups.*/N32768:EveryN/BackwardFewGroups.*/N65536'
SANITIZE_TOOLS="memcheck racecheck" SANITIZE_FILTER_memcheck="$f" SANITIZE_FILTER_racecheck="$f" \
  WARMUP_TIMEOUT=200 TIMEOUT_memcheck=150 TIMEOUT_racecheck=220 BUILD_DIR=build-device scripts/gpu-sanitize.sh
echo "gpu-sanitize exit $?"
tail -4 $OUT/sanitize.txt
gzip -f $OUT/sanitize.txt
