#!/usr/bin/env bash
# Session 24, call 2 (H100): the grid cluster's pipeline. build-device at db1101c plus
# uncommitted hooks: NJ_EXP_GRID_STAGES (stages tried first, kMaxGridStages raised to 16),
# NJ_EXP_GRID_DEFER / NJ_EXP_GRID_BATCH (rows between a row's sums and its dx, rows per wait;
# committed: stages − 2 and stages − 1, which leaves one stage copying ahead), and
# NJ_EXP_GRID_FORCE=N (grid clusters from N on, slices down to 64 slots a block).
set -uo pipefail
B=build-device
mkdir -p $OUT
declare -A V=(
  [base]=""
  [a-s7d3b4]="NJ_EXP_GRID_STAGES=7 NJ_EXP_GRID_DEFER=3 NJ_EXP_GRID_BATCH=4"
  [b-s7d2b3]="NJ_EXP_GRID_STAGES=7 NJ_EXP_GRID_DEFER=2 NJ_EXP_GRID_BATCH=3"
  [c-s6d2b2]="NJ_EXP_GRID_STAGES=6 NJ_EXP_GRID_DEFER=2 NJ_EXP_GRID_BATCH=2"
  [d-s7d4b2]="NJ_EXP_GRID_STAGES=7 NJ_EXP_GRID_DEFER=4 NJ_EXP_GRID_BATCH=2"
  [e-f262-s5]="NJ_EXP_GRID_FORCE=262144 NJ_EXP_GRID_STAGES=5"
  [f-f262-s12d4b4]="NJ_EXP_GRID_FORCE=262144 NJ_EXP_GRID_STAGES=12 NJ_EXP_GRID_DEFER=4 NJ_EXP_GRID_BATCH=4"
  [g-f262-s16d6b4]="NJ_EXP_GRID_FORCE=262144 NJ_EXP_GRID_STAGES=16 NJ_EXP_GRID_DEFER=6 NJ_EXP_GRID_BATCH=4"
  [h-f262-s16d8b8]="NJ_EXP_GRID_FORCE=262144 NJ_EXP_GRID_STAGES=16 NJ_EXP_GRID_DEFER=8 NJ_EXP_GRID_BATCH=8"
  [i-f262-s10d3b2]="NJ_EXP_GRID_FORCE=262144 NJ_EXP_GRID_STAGES=10 NJ_EXP_GRID_DEFER=3 NJ_EXP_GRID_BATCH=2"
  [j-f131-s16d6b4]="NJ_EXP_GRID_FORCE=131072 NJ_EXP_GRID_STAGES=16 NJ_EXP_GRID_DEFER=6 NJ_EXP_GRID_BATCH=4"
)
bp=$(cd $B && pwd)
# Correctness of the pipelines first: the grid GPU tests (N >= 1M) under each 1M variant.
for v in base a-s7d3b4 b-s7d2b3 c-s6d2b2 d-s7d4b2 g-f262-s16d6b4; do
  env ${V[$v]} NORMJIT_CACHE_DIR=$(mktemp -d) $B/tests/normjit_gpu_tests --gtest_filter='BackwardGridCluster.*' > $OUT/grid-test-$v.txt 2>&1
  echo "grid tests $v: exit $? $(grep -E '^\[  (PASSED|FAILED)' $OUT/grid-test-$v.txt | tr '\n' ' ')"
done > $OUT/grid-tests.txt
cat $OUT/grid-tests.txt
for r in 1 2; do
  for v in base a-s7d3b4 b-s7d2b3 c-s6d2b2 d-s7d4b2 e-f262-s5 f-f262-s12d4b4 g-f262-s16d6b4 h-f262-s16d8b8 i-f262-s10d3b2 j-f131-s16d6b4; do
    case $v in base) n=1048576,262144,131072;; [a-d]-*) n=1048576;; j-*) n=131072;; *) n=262144;; esac
    env ${V[$v]} NORMJIT_CACHE_DIR=$(mktemp -d) timeout 120 $B/normjit bench --graph --kinds layernorm,rmsnorm \
      --dtypes bf16 --weights fp32 --n $n > $OUT/bench-$v-$r.txt 2>&1
    awk -v v=$v -v r=$r '/^(layernorm|rmsnorm)/ {printf "%-16s run%s %-9s N=%-8s graph %8s us  %6s  %s\n", v, r, $1, $5, $7, $9, $10" "$11" "$12" "$13" "$14" "$15" "$16}' $OUT/bench-$v-$r.txt
  done
done | tee $OUT/summary.txt
cat $OUT/bench-base-1.txt | head -3
tar -C $OUT -czf $OUT/logs.tgz $(cd $OUT && ls grid-test-*.txt bench-*.txt) && (cd $OUT && rm grid-test-*.txt bench-*.txt)
