#!/usr/bin/env bash
# Session 24, call 3 (H100): the grid cluster's meeting without a fence. build-device at db1101c
# plus uncommitted hooks: NJ_EXP_GRID_TAGS (each block posts its row sums as two 8-byte words
# {sum, row tag} with relaxed stores, readers poll the tags; no red.release, no counter; the
# host zeroes the whole ring), NJ_EXP_GRID_FORCE=N (grid clusters from N on), NJ_EXP_GRID_STAGES.
set -uo pipefail
B=build-device
mkdir -p $OUT
declare -A V=(
  [base]=""
  [tags]="NJ_EXP_GRID_TAGS=1"
  [tags-f262-s5]="NJ_EXP_GRID_TAGS=1 NJ_EXP_GRID_FORCE=262144"
  [tags-f262-s8]="NJ_EXP_GRID_TAGS=1 NJ_EXP_GRID_FORCE=262144 NJ_EXP_GRID_STAGES=8"
  [tags-f262-s12]="NJ_EXP_GRID_TAGS=1 NJ_EXP_GRID_FORCE=262144 NJ_EXP_GRID_STAGES=12"
  [tags-f131-s5]="NJ_EXP_GRID_TAGS=1 NJ_EXP_GRID_FORCE=131072"
  [tags-f131-s12]="NJ_EXP_GRID_TAGS=1 NJ_EXP_GRID_FORCE=131072 NJ_EXP_GRID_STAGES=12"
  [base-f262-s5]="NJ_EXP_GRID_FORCE=262144"
)
for v in base tags; do
  env ${V[$v]} NORMJIT_CACHE_DIR=$(mktemp -d) $B/tests/normjit_gpu_tests --gtest_filter='BackwardGridCluster.*' > $OUT/grid-test-$v.txt 2>&1
  echo "grid tests $v: exit $? $(grep -E '^\[  (PASSED|FAILED)' $OUT/grid-test-$v.txt | tr '\n' ' ')"
done | tee $OUT/grid-tests.txt
for r in 1 2; do
  for v in base tags tags-f262-s5 tags-f262-s8 tags-f262-s12 tags-f131-s5 tags-f131-s12 base-f262-s5; do
    case $v in base|tags) n=1048576; d=bf16,fp32;; *f262*) n=262144; d=bf16;; *f131*) n=131072; d=bf16;; esac
    [ $v = base ] && n=1048576,262144,131072
    env ${V[$v]} NORMJIT_CACHE_DIR=$(mktemp -d) timeout 120 $B/normjit bench --graph --kinds layernorm,rmsnorm \
      --dtypes $d --weights fp32 --n $n > $OUT/bench-$v-$r.txt 2>&1
    awk -v v=$v -v r=$r '/^(layernorm|rmsnorm)/ {printf "%-14s run%s %-9s %-5s N=%-8s graph %8s us  %6s  %s\n", v, r, $1, $2, $5, $7, $9, $10" "$11" "$12" "$13" "$14" "$15" "$16}' $OUT/bench-$v-$r.txt
  done
done | tee $OUT/summary.txt
head -1 $OUT/bench-base-1.txt
tar -C $OUT -czf $OUT/logs.tgz $(cd $OUT && ls grid-test-*.txt bench-*.txt) && (cd $OUT && rm grid-test-*.txt bench-*.txt)
