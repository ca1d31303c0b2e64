#!/usr/bin/env bash
# Session 49, call 1 (H200). build-device at 7aab213 (session 48's HEAD).
# 1. What ran on no GPU in session 48: the gated rows with load()'s branch again (aaba555):
#    BackwardGated.* and BackwardFused*, and RMS bf16 16384 with the gate in bench (call 4 of
#    session 48: 233.7 us before the diet, 246.6 with its 4-byte spill).
# 2. NOTES 62 next 1: the row's fixed work spread over 32 elements a thread (four 16-byte slots)
#    instead of 16, where 125 registers hold them without spill (one 512-thread block an SM, or
#    two of 256): `tune --config` beside the heuristic at LN and RMS bf16 fp32 γ 16384-262144,
#    M·N = 64 Mi.
# 3. LN fp16 fp16 γ 1000 (staged), which read 130.3 then 134.5 us: three bench runs.
set -uo pipefail
B=build-device
export NORMJIT_CACHE_DIR=$(mktemp -d)
GPU_TEST_SHARDS=8 GPU_TEST_FILTER='*BackwardGated*:*BackwardFused*' BUILD_DIR=$B OUT=$OUT timeout 200 scripts/gpu-run.sh gpu-tests > $OUT/tests-run.txt 2>&1
echo "tests exit $? at $SECONDS s"
grep -E '^\[  (PASSED|FAILED|SKIPPED) |Failure' $OUT/gpu-tests.txt | sort | uniq -c | head -30
grep -A6 Failure $OUT/gpu-tests.txt | head -30
for r in 1 2; do $B/normjit bench --graph --kinds rmsnorm --dtypes bf16 --weights fp32 --n 16384 --fused gate; done > $OUT/bench-gate.txt 2>&1
echo "gate bench exit $? at $SECONDS s"; cat $OUT/bench-gate.txt | cut -c1-150
S="registers shared_sums shared_weights"
tune() { local k=$1 n=$2; shift 2; local args=(); for c in "$@"; do args+=(--config "threads=$c $S"); done
  $B/normjit tune --kind $k --n $n --dtype bf16 --weight-dtype fp32 --m $((67108864 / n)) "${args[@]}"; }
for k in layernorm rmsnorm; do
  tune $k 16384 "512 threads_per_row=512 vec=8" "256 threads_per_row=256 vec=8 cluster=2 min_blocks=2"
  tune $k 32768 "512 threads_per_row=512 vec=8 cluster=2" "256 threads_per_row=256 vec=8 cluster=4 min_blocks=2"
  tune $k 65536 "512 threads_per_row=512 vec=8 cluster=4" "256 threads_per_row=256 vec=8 cluster=8 min_blocks=2"
  tune $k 131072 "512 threads_per_row=512 vec=8 cluster=8" "256 threads_per_row=256 vec=8 cluster=16 min_blocks=2"
  tune $k 262144 "512 threads_per_row=512 vec=8 cluster=16"
done > $OUT/tune-32.txt 2> $OUT/tune-32.err
echo "tune exit $? at $SECONDS s"; cat $OUT/tune-32.txt | cut -c1-200; tail -5 $OUT/tune-32.err
for r in 1 2 3; do $B/normjit bench --graph --kinds layernorm --dtypes fp16 --weights same,fp32 --n 1000; done > $OUT/bench-1000.txt 2>&1
echo "bench 1000 exit $? at $SECONDS s"; cut -c1-150 $OUT/bench-1000.txt
tar czf $OUT/call1-logs.tgz -C $OUT gpu-tests.txt tests-run.txt tune-32.err 2>/dev/null
