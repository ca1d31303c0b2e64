#!/usr/bin/env bash
# Session 24, call 6 (H100): 16-bit grid clusters in 1024-thread blocks (a slot a thread, 64
# registers, no spills now) against 512 x 2 slots (96 registers), after Nsight Compute put the
# grid kernel at 4 warps a scheduler, 0.42 issued a cycle, 20% at barriers. build-device at
# b347760 plus an uncommitted hook: NJ_EXP_GRID_1024.
set -uo pipefail
B=build-device
mkdir -p $OUT
env NJ_EXP_GRID_1024=1 NORMJIT_CACHE_DIR=$(mktemp -d) $B/tests/normjit_gpu_tests --gtest_filter='BackwardGridCluster.*' > $OUT/grid-test-1024.txt 2>&1
echo "grid tests 1024: exit $? $(grep -E '^\[  (PASSED|FAILED)' $OUT/grid-test-1024.txt | tr '\n' ' ')" | tee $OUT/grid-tests.txt
for r in 1 2; do
  for v in base 1024; do
    e=; [ $v = 1024 ] && e=NJ_EXP_GRID_1024=1
    env $e NORMJIT_CACHE_DIR=$(mktemp -d) timeout 120 $B/normjit bench --graph --kinds layernorm,rmsnorm \
      --dtypes bf16,fp16 --weights fp32,same --n 1048576,1048577 > $OUT/bench-$v-$r.txt 2>&1
    awk -v v=$v -v r=$r '/^(layernorm|rmsnorm)/ {printf "%-5s run%s %-9s %-5s %-5s N=%-8s graph %8s us  %6s  %s\n", v, r, $1, $2, $3, $5, $7, $9, $10" "$11" "$12" "$13" "$14" "$15" "$16}' $OUT/bench-$v-$r.txt
  done
done | tee $OUT/summary.txt
tar -C $OUT -czf $OUT/logs.tgz $(cd $OUT && ls grid-test-*.txt bench-*.txt) && (cd $OUT && rm grid-test-*.txt bench-*.txt)
