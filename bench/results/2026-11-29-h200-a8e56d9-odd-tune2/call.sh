#!/usr/bin/env bash
# Session 34, call 7 (H200), build-device/normjit = a8e56d9 (the staged rows bounded): exhaustive
# tuning for the ranges of the rules call 6 points at: odd 16-bit rows between 5003 (staged
# blocks best) and 8191 (512 threads of an element a thread prefetching best) and beyond;
# LayerNorm's odd rows of 12289-14335 (one staged block of 800 threads against the heuristic's
# cluster of two); aligned 16-bit rows of 513-2047 not a multiple of 128 (staged blocks by the
# H100's rule; 1000's best is one slot a thread with shared sums, 8 blocks an SM).
set -uo pipefail
B=build-device
db=$(mktemp -d)
for spec in layernorm:bf16:6001:2 rmsnorm:bf16:6001:2 layernorm:bf16:7001:2 rmsnorm:bf16:7001:2 \
            layernorm:bf16:9001:2 rmsnorm:bf16:9001:2 layernorm:bf16:10001:2 rmsnorm:bf16:10001:2 \
            layernorm:bf16:13001:2 layernorm:bf16:14001:2 \
            layernorm:bf16:520:16 rmsnorm:bf16:520:16 layernorm:bf16:1500:16 rmsnorm:bf16:1500:16 \
            layernorm:bf16:1960:16 rmsnorm:bf16:1960:16; do
  IFS=: read -r kind dtype n align <<<"$spec"
  [ $SECONDS -lt 300 ] || { echo "out of time before $spec"; break; }
  NORMJIT_CACHE_DIR=$db timeout 60 $B/normjit tune --kind $kind --dtype $dtype --weight-dtype fp32 --n $n --align $align \
    --m $((67108864 / n)) --exhaustive >>$OUT/tune.txt 2>>$OUT/tune.err
done
args=(--graph --kinds layernorm,rmsnorm --dtypes bf16 --weights fp32 --n 520,1500,1960,6001,7001,9001,10001,13001,14001)
NORMJIT_CACHE_DIR=$(mktemp -d) timeout 90 $B/normjit bench "${args[@]}" --json $OUT/heuristic.json >$OUT/heuristic.txt 2>&1
NORMJIT_CACHE_DIR=$db timeout 90 $B/normjit bench "${args[@]}" --json $OUT/tuned.json >$OUT/tuned.txt 2>&1
python3 bench/compare_bench.py $OUT/heuristic.json $OUT/tuned.json > $OUT/compare.txt 2>&1
cut -c1-170 $OUT/compare.txt; cp $db/tuning.toml $OUT/ 2>/dev/null
grep -E '^(layernorm|rmsnorm)' $OUT/tune.txt | sed -E 's/ x=bf16 dy=bf16 dx=bf16 weight=fp32 \+weight( \+bias)?//' | cut -c1-300
echo "done at $SECONDS s"
