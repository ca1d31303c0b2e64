#!/usr/bin/env bash
# Session 26, call 6 (H100), 96adb72: with the clusters' meetings cheaper (posting), is the
# heuristic still the best config at the cluster shapes? Exhaustive tuning (L2 flushed) of LN
# and RMS, bf16 (fp32 γ) and fp32, N = 32768 .. 262144 at M·N = 64 Mi; then bench --graph with
# the tuning database (tuned) against a fresh cache (heuristic), in turns, twice.
set -uo pipefail
B=build-device
T=$(mktemp -d)
for k in layernorm rmsnorm; do for d in "bf16 --weight-dtype fp32" "fp32"; do for n in 32768 65536 131072 262144; do
  NORMJIT_CACHE_DIR=$T timeout 60 $B/normjit tune --kind $k --dtype $d --n $n --m $((67108864 / n)) --exhaustive 2>>$OUT/tune.err | grep -v "^  fit"
done; done; done > $OUT/tune.txt
grep -E "^(layernorm|rmsnorm)" $OUT/tune.txt | cut -c1-40,100-230
ARGS="--graph --dtypes bf16,fp32 --weights fp32 --n 32768,65536,131072,262144"
for r in 1 2; do
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 100 $B/normjit bench $ARGS --json $OUT/heuristic$r.json > $OUT/heuristic$r.txt 2>&1
  NORMJIT_CACHE_DIR=$T timeout 100 $B/normjit bench $ARGS --json $OUT/tuned$r.json > $OUT/tuned$r.txt 2>&1
  python3 bench/compare_bench.py $OUT/heuristic$r.json $OUT/tuned$r.json | cut -c1-200
done
