#!/usr/bin/env bash
# Session 24, call 4 (H100): the grid cluster's spin on the arrival counter with a sleep between
# polls. build-device at b347760 plus uncommitted hooks: NJ_EXP_GRID_SLEEP=ns (__nanosleep between
# polls of thread 0's ld.acquire), NJ_EXP_GRID_BACKOFF (doubling it up to 2 us),
# NJ_EXP_GRID_FORCE=N (grid clusters from N on).
set -uo pipefail
B=build-device
mkdir -p $OUT
declare -A V=(
  [base]=""
  [sleep64]="NJ_EXP_GRID_SLEEP=64"
  [sleep256]="NJ_EXP_GRID_SLEEP=256"
  [backoff32]="NJ_EXP_GRID_SLEEP=32 NJ_EXP_GRID_BACKOFF=1"
  [f262-base]="NJ_EXP_GRID_FORCE=262144"
  [f262-sleep64]="NJ_EXP_GRID_FORCE=262144 NJ_EXP_GRID_SLEEP=64"
  [f262-backoff32]="NJ_EXP_GRID_FORCE=262144 NJ_EXP_GRID_SLEEP=32 NJ_EXP_GRID_BACKOFF=1"
)
for v in sleep64 backoff32; do
  env ${V[$v]} NORMJIT_CACHE_DIR=$(mktemp -d) $B/tests/normjit_gpu_tests --gtest_filter='BackwardGridCluster.*' > $OUT/grid-test-$v.txt 2>&1
  echo "grid tests $v: exit $? $(grep -E '^\[  (PASSED|FAILED)' $OUT/grid-test-$v.txt | tr '\n' ' ')"
done | tee $OUT/grid-tests.txt
for r in 1 2; do
  for v in base sleep64 sleep256 backoff32 f262-base f262-sleep64 f262-backoff32; do
    case $v in f262*) n=262144;; *) n=1048576;; esac
    env ${V[$v]} NORMJIT_CACHE_DIR=$(mktemp -d) timeout 120 $B/normjit bench --graph --kinds layernorm,rmsnorm \
      --dtypes bf16 --weights fp32 --n $n > $OUT/bench-$v-$r.txt 2>&1
    awk -v v=$v -v r=$r '/^(layernorm|rmsnorm)/ {printf "%-14s run%s %-9s %-5s N=%-8s graph %8s us  %6s  %s\n", v, r, $1, $2, $5, $7, $9, $10" "$11" "$12" "$13" "$14" "$15" "$16}' $OUT/bench-$v-$r.txt
  done
done | tee $OUT/summary.txt
tar -C $OUT -czf $OUT/logs.tgz $(cd $OUT && ls grid-test-*.txt bench-*.txt) && (cd $OUT && rm grid-test-*.txt bench-*.txt)
