#!/usr/bin/env bash
# Session 38, final call (H200): build-device/normjit = the commit of this script (phased rows
# with the slot column fixed, taken where the aligned twin is a register cluster),
# build-device/v/old = 49b2015 (before phased rows).
# 1) The whole GPU suite (Tuning.PhasedRowsInEveryBlockShapeMatchTheReference and
#    BackwardPhasedRows new; phased shapes in BackwardDeterminism).
# 2) A/B, two rounds, bench --graph: long odd 16-bit rows, LN (γ, β) and RMS (γ), fp32 γ.
set -uo pipefail
B=build-device
GPU_TEST_SHARDS=16 BUILD_DIR=$B OUT=$OUT timeout 290 scripts/gpu-run.sh gpu-tests > $OUT/gpu-run.txt 2>&1
echo "gpu suite exit $? at $SECONDS s"; grep -E "tests? (passed|failed)|PASSED|FAILED" $OUT/gpu-tests.txt | sort | uniq -c | head -20
ab=$(mktemp -d)
timeout 80 scripts/bench-ab.sh $B/v/old $B/normjit $ab \
  long "--graph --kinds layernorm,rmsnorm --dtypes bf16 --weights fp32 --n 16383,30001,65537,262143" > $OUT/ab.txt 2>&1
echo "ab exit $? at $SECONDS s"
cut -c1-200 $OUT/ab.txt | grep -vE "^ *$" | head -40
tar czf $OUT/logs.tgz -C $OUT $(cd $OUT && ls gpu-run.txt gpu-tests.txt 2>/dev/null) -C $ab . 2>/dev/null
(cd $OUT && rm -f gpu-run.txt gpu-tests.txt)
