#!/usr/bin/env bash
# Session 26, call 4 (H100), 96adb72 (clusters meet by posting: st.async into mailboxes counted
# by mbarriers): racecheck and synccheck over the configs the engine picks at M = 199 and 4096
# for N = 32768 and 65536 (register clusters of 4 and 8 blocks, posting; with parallel norms,
# the barrier and reads), each run over two row groups so every block works its row loop and
# the mailboxes' phases wrap. The Python package's GPU tests: call-python.sh (call 5).
set -uo pipefail
B=build-device
F='EveryN/BackwardFewGroups.*/N32768:EveryN/BackwardFewGroups.*/N65536'
SANITIZE_TOOLS="racecheck synccheck" SANITIZE_FILTER_racecheck="$F" SANITIZE_FILTER_synccheck="$F" \
  BUILD_DIR=$B OUT=$OUT timeout 330 scripts/gpu-sanitize.sh > $OUT/sanitize-run.txt 2>&1
echo "sanitize: exit $?"; tail -4 $OUT/sanitize.txt
