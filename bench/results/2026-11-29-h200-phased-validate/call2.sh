#!/usr/bin/env bash
# Session 39, call 2 (H200): build-device = branch next/phased-rows-2 with call 1's two test
# fixes; build-device/v/old = main 1e71f99 (no phased rows).
# 1) The two GPU tests call 1 failed (the tests' expectations, not the kernels' results).
# 2) One-block phased kernels timed beside the heuristic's (normjit tune --config), LN and RMS
#    bf16 fp32 γ at 4095, 5003, 8191, 12289: now with the slot column fixed and one dx store.
# 3) A/B, two rounds, bench --graph, the odd N the rule phases (aligned twin a cluster of 2-4).
set -uo pipefail
B=build-device
GPU_TEST_SHARDS=2 GPU_TEST_FILTER='BackwardPhasedRows.*:Tuning.PhasedRows*' BUILD_DIR=$B OUT=$OUT timeout 220 scripts/gpu-run.sh gpu-tests > $OUT/gpu-run.txt 2>&1
echo "gpu tests exit $? at $SECONDS s"
grep -E "^\[  (PASSED|FAILED) |Failure|^\[       OK" $OUT/gpu-tests.txt | head -20
export NORMJIT_CACHE_DIR=$(mktemp -d)
P="--dtype bf16 --weight-dtype fp32 --m 16384"
one() { timeout 40 $B/normjit tune --kind $1 --n $2 $P --config "$3" 2>&1 | grep -vE "^ *$"; }
{
one layernorm 4095 "threads=288 threads_per_row=288 vec=8 registers min_blocks=3 shared_sums shared_weights phased"
one layernorm 5003 "threads=320 threads_per_row=320 vec=8 registers min_blocks=2 shared_sums shared_weights phased"
one layernorm 8191 "threads=544 threads_per_row=544 vec=8 registers shared_sums shared_weights phased"
one layernorm 12289 "threads=800 threads_per_row=800 vec=8 registers shared_sums shared_weights phased"
one rmsnorm 4095 "threads=288 threads_per_row=288 vec=8 registers min_blocks=3 shared_sums shared_weights phased"
one rmsnorm 5003 "threads=320 threads_per_row=320 vec=8 registers min_blocks=3 shared_sums shared_weights phased"
one rmsnorm 8191 "threads=544 threads_per_row=544 vec=8 registers shared_sums shared_weights phased"
one rmsnorm 12289 "threads=800 threads_per_row=800 vec=8 registers shared_sums shared_weights phased"
} > $OUT/one-block.txt
echo "one-block tune at $SECONDS s"; cut -c1-160 $OUT/one-block.txt | head -60
ab=$(mktemp -d)
timeout 120 scripts/bench-ab.sh $B/v/old $B/normjit $ab \
  clusters "--graph --kinds layernorm,rmsnorm --dtypes bf16 --weights fp32 --n 16383,20001,24575,30001" > $OUT/ab.txt 2>&1
echo "ab exit $? at $SECONDS s"
cut -c1-200 $OUT/ab.txt | grep -vE "^ *$" | head -40
tar czf $OUT/logs.tgz -C $OUT $(cd $OUT && ls gpu-run.txt gpu-tests.txt environment.txt 2>/dev/null) -C $ab . 2>/dev/null
(cd $OUT && rm -f gpu-run.txt gpu-tests.txt)
