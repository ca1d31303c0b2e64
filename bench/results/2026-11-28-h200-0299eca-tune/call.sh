#!/usr/bin/env bash
# Session 28, call 3 (H200), 0299eca: are the heuristic's configs (fitted to H100 timings) still
# the best on the H200, where 16-bit LayerNorm reads 64-86% of copy against fp32's 84-102%?
# Exhaustive tuning (L2 flushed) of bf16 rows (fp32 γ) at M·N = 64 Mi; then bench --graph with
# the tuning database (tuned) against a fresh cache (heuristic). Then the two Python steps call 2
# ran out of time for (python_overhead at M = 4096, host_breakdown).
set -uo pipefail
B=build-device
T=$(mktemp -d)
start=$SECONDS
for s in "layernorm 4096" "layernorm 8192" "layernorm 12288" "layernorm 16384" "layernorm 5003" \
         "layernorm 32768" "rmsnorm 4096" "rmsnorm 12288" "layernorm 65536" "layernorm 2048" "rmsnorm 65536"; do
  set -- $s
  [ $((SECONDS - start)) -lt 300 ] || { echo "tune: out of time before $s"; continue; }
  NORMJIT_CACHE_DIR=$T timeout 50 $B/normjit tune --kind $1 --dtype bf16 --weight-dtype fp32 --n $2 --m $((67108864 / $2)) --exhaustive 2>>$OUT/tune.err | grep -v "^  fit"
done > $OUT/tune.txt
grep -E "^(layernorm|rmsnorm)" $OUT/tune.txt | cut -c1-40,100-230
ARGS="--graph --dtypes bf16 --weights fp32 --n 2048,4096,5003,8192,12288,16384,32768,65536"
NORMJIT_CACHE_DIR=$(mktemp -d) timeout 60 $B/normjit bench $ARGS --json $OUT/heuristic.json > $OUT/heuristic.txt 2>&1
NORMJIT_CACHE_DIR=$T timeout 60 $B/normjit bench $ARGS --json $OUT/tuned.json > $OUT/tuned.txt 2>&1
python3 bench/compare_bench.py $OUT/heuristic.json $OUT/tuned.json | cut -c1-200
export NORMJIT_LIBRARY=$PWD/$B/libnormjit.so NORMJIT_CACHE_DIR=$(mktemp -d)
{ timeout 45 python3 bench/python_overhead.py --m 4096 --n 256; echo "overhead-m4096: exit $?"
  timeout 60 python3 bench/host_breakdown.py; echo "host-breakdown: exit $?"; } > $OUT/python-rest.txt 2>&1
grep -E "exit" $OUT/python-rest.txt
