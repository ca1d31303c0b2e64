#!/usr/bin/env bash
# Session 57, call 2 (H200). build-device: early_weights as a launch config field (the tuner
# tries the first 20 candidates of a recompute shape flipped; the heuristic not yet), and the fix
# for rows in phase at 262143-266240 columns (the heuristic threw on a memory-rich device).
# 1. GPU tests: BackwardEarlyWeights, the new phased-rows test, BackwardRecompute.
# 2. For recompute over odd N (LN/RMS, bf16/fp16 fp32 γ, fp32): the heuristic's config, it with
#    early_weights, blocks of 8 elements a thread two an SM (the rich fused rule's shape), and
#    that with early_weights: each timed by `normjit tune --config` (the data for a rule).
set -uo pipefail
B=build-device
GPU_TEST_SHARDS=16 GPU_TEST_FILTER='BackwardEarlyWeights*:BackwardPhasedRows.RowsInPhaseJust*:BackwardRecompute.*' BUILD_DIR=$B OUT=$OUT timeout 150 scripts/gpu-run.sh gpu-tests > $OUT/tests-run.txt 2>&1
echo "tests exit $? at $SECONDS s"
grep -hE '^\[  (PASSED|FAILED|SKIPPED) ' $OUT/gpu-tests*.txt | sort | uniq -c | head; grep -h -B2 -A8 'Failure' $OUT/gpu-tests*.txt | head -30
while IFS='|' read -r shape heur rich; do
  set -- $shape; kind=$1 dtype=$2 n=$3 align=$4 m=$5
  [ $SECONDS -gt 520 ] && { echo "out of time at $kind $dtype $n"; break; }
  echo "### $shape" >> $OUT/tune-progress.txt
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 30 $B/normjit tune --kind $kind --dtype $dtype --weight-dtype fp32 --n $n --align $align \
    --m $m --recompute-from-output --config "$heur early_weights" --config "$rich" --config "$rich early_weights" \
    2>> $OUT/tune-progress.txt | grep -E "^config|^ *config" >> $OUT/configs.txt
done <<'SHAPES'
layernorm bf16 769 2 87267|threads=64 threads_per_row=64 vec=1 registers|threads=128 threads_per_row=128 vec=1 registers min_blocks=2
layernorm bf16 897 2 74814|threads=64 threads_per_row=64 vec=1 registers|threads=128 threads_per_row=128 vec=1 registers min_blocks=2
layernorm bf16 1001 2 67041|threads=64 threads_per_row=64 vec=1 registers|threads=128 threads_per_row=128 vec=1 registers min_blocks=2
layernorm bf16 1153 2 58203|threads=96 threads_per_row=96 vec=1 registers|threads=160 threads_per_row=160 vec=1 registers min_blocks=2
layernorm bf16 1283 2 52306|threads=96 threads_per_row=96 vec=1 registers|threads=192 threads_per_row=192 vec=1 registers min_blocks=2
layernorm bf16 1537 2 43662|threads=128 threads_per_row=128 vec=1 registers|threads=224 threads_per_row=224 vec=1 registers min_blocks=2
layernorm bf16 1793 2 37428|threads=128 threads_per_row=128 vec=1 registers|threads=256 threads_per_row=256 vec=1 registers min_blocks=2
layernorm bf16 2049 2 32752|threads=160 threads_per_row=160 vec=1 registers|threads=288 threads_per_row=288 vec=1 registers min_blocks=2
layernorm bf16 2305 2 29114|threads=160 threads_per_row=160 vec=1 registers|threads=320 threads_per_row=320 vec=1 registers min_blocks=2
layernorm bf16 2561 2 26204|threads=192 threads_per_row=192 vec=1 registers|threads=352 threads_per_row=352 vec=1 registers min_blocks=2
layernorm bf16 2817 2 23822|threads=192 threads_per_row=192 vec=1 registers|threads=384 threads_per_row=384 vec=1 registers min_blocks=2
layernorm bf16 3001 2 22362|threads=192 threads_per_row=192 vec=1 registers|threads=384 threads_per_row=384 vec=1 registers min_blocks=2
layernorm bf16 3201 2 20964|threads=224 threads_per_row=224 vec=1 registers|threads=416 threads_per_row=416 vec=1 registers min_blocks=2
layernorm bf16 3585 2 18719|threads=256 threads_per_row=256 vec=1 registers|threads=480 threads_per_row=480 vec=1 registers min_blocks=2
layernorm bf16 3841 2 17471|threads=512 threads_per_row=512 vec=1 registers min_blocks=2|threads=512 threads_per_row=512 vec=1 registers min_blocks=2
layernorm bf16 4095 2 16388|threads=512 threads_per_row=512 vec=1 registers min_blocks=2|threads=512 threads_per_row=512 vec=1 registers min_blocks=2
layernorm fp16 769 2 87267|threads=64 threads_per_row=64 vec=1 registers|threads=128 threads_per_row=128 vec=1 registers min_blocks=2
layernorm fp16 897 2 74814|threads=64 threads_per_row=64 vec=1 registers|threads=128 threads_per_row=128 vec=1 registers min_blocks=2
layernorm fp16 1001 2 67041|threads=64 threads_per_row=64 vec=1 registers|threads=128 threads_per_row=128 vec=1 registers min_blocks=2
layernorm fp16 1153 2 58203|threads=96 threads_per_row=96 vec=1 registers|threads=160 threads_per_row=160 vec=1 registers min_blocks=2
layernorm fp16 1283 2 52306|threads=96 threads_per_row=96 vec=1 registers|threads=192 threads_per_row=192 vec=1 registers min_blocks=2
layernorm fp16 1537 2 43662|threads=128 threads_per_row=128 vec=1 registers|threads=224 threads_per_row=224 vec=1 registers min_blocks=2
layernorm fp16 1793 2 37428|threads=128 threads_per_row=128 vec=1 registers|threads=256 threads_per_row=256 vec=1 registers min_blocks=2
layernorm fp16 2049 2 32752|threads=160 threads_per_row=160 vec=1 registers|threads=288 threads_per_row=288 vec=1 registers min_blocks=2
layernorm fp16 2305 2 29114|threads=160 threads_per_row=160 vec=1 registers|threads=320 threads_per_row=320 vec=1 registers min_blocks=2
layernorm fp16 2561 2 26204|threads=192 threads_per_row=192 vec=1 registers|threads=352 threads_per_row=352 vec=1 registers min_blocks=2
layernorm fp16 2817 2 23822|threads=192 threads_per_row=192 vec=1 registers|threads=384 threads_per_row=384 vec=1 registers min_blocks=2
layernorm fp16 3001 2 22362|threads=192 threads_per_row=192 vec=1 registers|threads=384 threads_per_row=384 vec=1 registers min_blocks=2
layernorm fp16 3201 2 20964|threads=224 threads_per_row=224 vec=1 registers|threads=416 threads_per_row=416 vec=1 registers min_blocks=2
layernorm fp16 3585 2 18719|threads=256 threads_per_row=256 vec=1 registers|threads=480 threads_per_row=480 vec=1 registers min_blocks=2
layernorm fp16 3841 2 17471|threads=256 threads_per_row=256 vec=1 registers|threads=512 threads_per_row=512 vec=1 registers min_blocks=2
layernorm fp16 4095 2 16388|threads=256 threads_per_row=256 vec=1 registers|threads=512 threads_per_row=512 vec=1 registers min_blocks=2
layernorm fp32 769 4 87267|threads=64 threads_per_row=64 vec=1 registers|threads=128 threads_per_row=128 vec=1 registers min_blocks=2
layernorm fp32 897 4 74814|threads=64 threads_per_row=64 vec=1 registers|threads=128 threads_per_row=128 vec=1 registers min_blocks=2
layernorm fp32 1001 4 67041|threads=64 threads_per_row=64 vec=1 registers|threads=128 threads_per_row=128 vec=1 registers min_blocks=2
layernorm fp32 1153 4 58203|threads=96 threads_per_row=96 vec=1 registers|threads=160 threads_per_row=160 vec=1 registers min_blocks=2
layernorm fp32 1283 4 52306|threads=96 threads_per_row=96 vec=1 registers|threads=192 threads_per_row=192 vec=1 registers min_blocks=2
layernorm fp32 1537 4 43662|threads=128 threads_per_row=128 vec=1 registers|threads=224 threads_per_row=224 vec=1 registers min_blocks=2
layernorm fp32 1793 4 37428|threads=128 threads_per_row=128 vec=1 registers|threads=256 threads_per_row=256 vec=1 registers min_blocks=2
layernorm fp32 2049 4 32752|threads=160 threads_per_row=160 vec=1 registers|threads=288 threads_per_row=288 vec=1 registers min_blocks=2
layernorm fp32 2305 4 29114|threads=160 threads_per_row=160 vec=1 registers|threads=320 threads_per_row=320 vec=1 registers min_blocks=2
layernorm fp32 2561 4 26204|threads=192 threads_per_row=192 vec=1 registers|threads=352 threads_per_row=352 vec=1 registers min_blocks=2
layernorm fp32 2817 4 23822|threads=192 threads_per_row=192 vec=1 registers|threads=384 threads_per_row=384 vec=1 registers min_blocks=2
layernorm fp32 3001 4 22362|threads=192 threads_per_row=192 vec=1 registers|threads=384 threads_per_row=384 vec=1 registers min_blocks=2
layernorm fp32 3201 4 20964|threads=224 threads_per_row=224 vec=1 registers|threads=416 threads_per_row=416 vec=1 registers min_blocks=2
layernorm fp32 3585 4 18719|threads=256 threads_per_row=256 vec=1 registers|threads=480 threads_per_row=480 vec=1 registers min_blocks=2
layernorm fp32 3841 4 17471|threads=256 threads_per_row=256 vec=1 registers|threads=512 threads_per_row=512 vec=1 registers min_blocks=2
layernorm fp32 4095 4 16388|threads=256 threads_per_row=256 vec=1 registers|threads=512 threads_per_row=512 vec=1 registers min_blocks=2
layernorm fp32 4609 4 14560|threads=608 threads_per_row=608 vec=1 registers prefetch|threads=608 threads_per_row=608 vec=1 registers min_blocks=2
layernorm fp32 5003 4 13413|threads=640 threads_per_row=640 vec=1 registers prefetch|threads=640 threads_per_row=640 vec=1 registers min_blocks=2
layernorm fp32 6001 4 11182|threads=768 threads_per_row=768 vec=1 registers prefetch|threads=768 threads_per_row=768 vec=1 registers min_blocks=2
layernorm fp32 8191 4 8193|threads=512 threads_per_row=512 vec=1 registers min_blocks=2 shared_sums|threads=1024 threads_per_row=1024 vec=1 registers min_blocks=2
rmsnorm bf16 769 2 87267|threads=64 threads_per_row=64 vec=1 registers|threads=128 threads_per_row=128 vec=1 registers min_blocks=2
rmsnorm bf16 897 2 74814|threads=64 threads_per_row=64 vec=1 registers|threads=128 threads_per_row=128 vec=1 registers min_blocks=2
rmsnorm bf16 1001 2 67041|threads=64 threads_per_row=64 vec=1 registers|threads=128 threads_per_row=128 vec=1 registers min_blocks=2
rmsnorm bf16 1153 2 58203|threads=96 threads_per_row=96 vec=1 registers|threads=160 threads_per_row=160 vec=1 registers min_blocks=2
rmsnorm bf16 1283 2 52306|threads=96 threads_per_row=96 vec=1 registers|threads=192 threads_per_row=192 vec=1 registers min_blocks=2
rmsnorm bf16 1537 2 43662|threads=128 threads_per_row=128 vec=1 registers|threads=224 threads_per_row=224 vec=1 registers min_blocks=2
rmsnorm bf16 1793 2 37428|threads=128 threads_per_row=128 vec=1 registers|threads=256 threads_per_row=256 vec=1 registers min_blocks=2
rmsnorm bf16 2049 2 32752|threads=160 threads_per_row=160 vec=1 registers|threads=288 threads_per_row=288 vec=1 registers min_blocks=2
rmsnorm bf16 2305 2 29114|threads=160 threads_per_row=160 vec=1 registers|threads=320 threads_per_row=320 vec=1 registers min_blocks=2
rmsnorm bf16 2561 2 26204|threads=192 threads_per_row=192 vec=1 registers|threads=352 threads_per_row=352 vec=1 registers min_blocks=2
rmsnorm bf16 2817 2 23822|threads=192 threads_per_row=192 vec=1 registers|threads=384 threads_per_row=384 vec=1 registers min_blocks=2
rmsnorm bf16 3001 2 22362|threads=192 threads_per_row=192 vec=1 registers|threads=384 threads_per_row=384 vec=1 registers min_blocks=2
rmsnorm bf16 3201 2 20964|threads=224 threads_per_row=224 vec=1 registers|threads=416 threads_per_row=416 vec=1 registers min_blocks=2
rmsnorm bf16 3585 2 18719|threads=256 threads_per_row=256 vec=1 registers|threads=480 threads_per_row=480 vec=1 registers min_blocks=2
rmsnorm bf16 3841 2 17471|threads=256 threads_per_row=256 vec=1 registers|threads=512 threads_per_row=512 vec=1 registers min_blocks=2
rmsnorm bf16 4095 2 16388|threads=256 threads_per_row=256 vec=1 registers|threads=512 threads_per_row=512 vec=1 registers min_blocks=2
rmsnorm fp16 769 2 87267|threads=64 threads_per_row=64 vec=1 registers|threads=128 threads_per_row=128 vec=1 registers min_blocks=2
rmsnorm fp16 897 2 74814|threads=64 threads_per_row=64 vec=1 registers|threads=128 threads_per_row=128 vec=1 registers min_blocks=2
rmsnorm fp16 1001 2 67041|threads=64 threads_per_row=64 vec=1 registers|threads=128 threads_per_row=128 vec=1 registers min_blocks=2
rmsnorm fp16 1153 2 58203|threads=96 threads_per_row=96 vec=1 registers|threads=160 threads_per_row=160 vec=1 registers min_blocks=2
rmsnorm fp16 1283 2 52306|threads=96 threads_per_row=96 vec=1 registers|threads=192 threads_per_row=192 vec=1 registers min_blocks=2
rmsnorm fp16 1537 2 43662|threads=128 threads_per_row=128 vec=1 registers|threads=224 threads_per_row=224 vec=1 registers min_blocks=2
rmsnorm fp16 1793 2 37428|threads=128 threads_per_row=128 vec=1 registers|threads=256 threads_per_row=256 vec=1 registers min_blocks=2
rmsnorm fp16 2049 2 32752|threads=160 threads_per_row=160 vec=1 registers|threads=288 threads_per_row=288 vec=1 registers min_blocks=2
rmsnorm fp16 2305 2 29114|threads=160 threads_per_row=160 vec=1 registers|threads=320 threads_per_row=320 vec=1 registers min_blocks=2
rmsnorm fp16 2561 2 26204|threads=192 threads_per_row=192 vec=1 registers|threads=352 threads_per_row=352 vec=1 registers min_blocks=2
rmsnorm fp16 2817 2 23822|threads=192 threads_per_row=192 vec=1 registers|threads=384 threads_per_row=384 vec=1 registers min_blocks=2
rmsnorm fp16 3001 2 22362|threads=192 threads_per_row=192 vec=1 registers|threads=384 threads_per_row=384 vec=1 registers min_blocks=2
rmsnorm fp16 3201 2 20964|threads=224 threads_per_row=224 vec=1 registers|threads=416 threads_per_row=416 vec=1 registers min_blocks=2
rmsnorm fp16 3585 2 18719|threads=256 threads_per_row=256 vec=1 registers|threads=480 threads_per_row=480 vec=1 registers min_blocks=2
rmsnorm fp16 3841 2 17471|threads=256 threads_per_row=256 vec=1 registers|threads=512 threads_per_row=512 vec=1 registers min_blocks=2
rmsnorm fp16 4095 2 16388|threads=256 threads_per_row=256 vec=1 registers|threads=512 threads_per_row=512 vec=1 registers min_blocks=2
rmsnorm fp32 769 4 87267|threads=64 threads_per_row=64 vec=1 registers|threads=128 threads_per_row=128 vec=1 registers min_blocks=2
rmsnorm fp32 897 4 74814|threads=64 threads_per_row=64 vec=1 registers|threads=128 threads_per_row=128 vec=1 registers min_blocks=2
rmsnorm fp32 1001 4 67041|threads=64 threads_per_row=64 vec=1 registers|threads=128 threads_per_row=128 vec=1 registers min_blocks=2
rmsnorm fp32 1153 4 58203|threads=96 threads_per_row=96 vec=1 registers|threads=160 threads_per_row=160 vec=1 registers min_blocks=2
rmsnorm fp32 1283 4 52306|threads=96 threads_per_row=96 vec=1 registers|threads=192 threads_per_row=192 vec=1 registers min_blocks=2
rmsnorm fp32 1537 4 43662|threads=128 threads_per_row=128 vec=1 registers|threads=224 threads_per_row=224 vec=1 registers min_blocks=2
rmsnorm fp32 1793 4 37428|threads=128 threads_per_row=128 vec=1 registers|threads=256 threads_per_row=256 vec=1 registers min_blocks=2
rmsnorm fp32 2049 4 32752|threads=160 threads_per_row=160 vec=1 registers|threads=288 threads_per_row=288 vec=1 registers min_blocks=2
rmsnorm fp32 2305 4 29114|threads=160 threads_per_row=160 vec=1 registers|threads=320 threads_per_row=320 vec=1 registers min_blocks=2
rmsnorm fp32 2561 4 26204|threads=192 threads_per_row=192 vec=1 registers|threads=352 threads_per_row=352 vec=1 registers min_blocks=2
rmsnorm fp32 2817 4 23822|threads=192 threads_per_row=192 vec=1 registers|threads=384 threads_per_row=384 vec=1 registers min_blocks=2
rmsnorm fp32 3001 4 22362|threads=192 threads_per_row=192 vec=1 registers|threads=384 threads_per_row=384 vec=1 registers min_blocks=2
rmsnorm fp32 3201 4 20964|threads=224 threads_per_row=224 vec=1 registers|threads=416 threads_per_row=416 vec=1 registers min_blocks=2
rmsnorm fp32 3585 4 18719|threads=256 threads_per_row=256 vec=1 registers|threads=480 threads_per_row=480 vec=1 registers min_blocks=2
rmsnorm fp32 3841 4 17471|threads=256 threads_per_row=256 vec=1 registers|threads=512 threads_per_row=512 vec=1 registers min_blocks=2
rmsnorm fp32 4095 4 16388|threads=256 threads_per_row=256 vec=1 registers|threads=512 threads_per_row=512 vec=1 registers min_blocks=2
rmsnorm fp32 4609 4 14560|threads=608 threads_per_row=608 vec=1 registers prefetch|threads=608 threads_per_row=608 vec=1 registers min_blocks=2
rmsnorm fp32 5003 4 13413|threads=640 threads_per_row=640 vec=1 registers prefetch|threads=640 threads_per_row=640 vec=1 registers min_blocks=2
rmsnorm fp32 6001 4 11182|threads=768 threads_per_row=768 vec=1 registers prefetch|threads=768 threads_per_row=768 vec=1 registers min_blocks=2
rmsnorm fp32 8191 4 8193|threads=512 threads_per_row=512 vec=1 registers min_blocks=2 shared_sums|threads=1024 threads_per_row=1024 vec=1 registers min_blocks=2
SHAPES
echo "configs done at $SECONDS s"
mkdir -p $OUT/logs && mv $OUT/gpu-tests*.txt $OUT/tests-run.txt $OUT/tune-progress.txt $OUT/logs/ 2>/dev/null
tar czf $OUT/call2.tgz -C $OUT logs && rm -rf $OUT/logs
