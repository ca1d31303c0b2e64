#!/usr/bin/env bash
# Session 24, call 7 (H100): γ of a grid cluster block's slice held in shared memory (after the
# stages), read from there in both passes, instead of from L1/L2 twice a row — call 5 found γ's
# loads the top long-scoreboard lines. build-device at 7d65ddb plus the uncommitted template
# change (PTX of every other kernel unchanged, 272 checked) and hook NJ_EXP_GRID_WEIGHTS.
set -uo pipefail
B=build-device
mkdir -p $OUT
for v in base weights; do
  e=; [ $v = weights ] && e=NJ_EXP_GRID_WEIGHTS=1
  env $e NORMJIT_CACHE_DIR=$(mktemp -d) $B/tests/normjit_gpu_tests --gtest_filter='BackwardGridCluster.*' > $OUT/grid-test-$v.txt 2>&1
  echo "grid tests $v: exit $? $(grep -E '^\[  (PASSED|FAILED)' $OUT/grid-test-$v.txt | tr '\n' ' ')"
done | tee $OUT/grid-tests.txt
for r in 1 2; do
  for v in base weights; do
    e=; [ $v = weights ] && e=NJ_EXP_GRID_WEIGHTS=1
    env $e NORMJIT_CACHE_DIR=$(mktemp -d) timeout 150 $B/normjit bench --graph --kinds layernorm,rmsnorm \
      --dtypes bf16,fp16,fp32 --weights fp32,same --n 1048576 > $OUT/bench-$v-$r.txt 2>&1
    awk -v v=$v -v r=$r '/^(layernorm|rmsnorm)/ {printf "%-7s run%s %-9s %-5s %-5s N=%-8s graph %8s us  %6s  %s\n", v, r, $1, $2, $3, $5, $7, $9, $10" "$11" "$12" "$13" "$14" "$15" "$16" "$17}' $OUT/bench-$v-$r.txt
  done
done | tee $OUT/summary.txt
tar -C $OUT -czf $OUT/logs.tgz $(cd $OUT && ls grid-test-*.txt bench-*.txt) && (cd $OUT && rm grid-test-*.txt bench-*.txt)
