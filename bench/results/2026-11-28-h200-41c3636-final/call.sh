#!/usr/bin/env bash
# Session 28, call 5 (H200), 41c3636 (the memory-rich rules as narrowed after call 4): the
# backward sweep with small-M latency; then, with what is left of the session's device time,
# exhaustive tuning of shapes still short of 90% on the H200 (data for the next rules; nothing
# here is adopted unmeasured) and bench --graph heuristic against tuned on them.
set -uo pipefail
B=build-device
NORMJIT_CACHE_DIR=$(mktemp -d) timeout 140 $B/normjit bench --latency --graph --json $OUT/bench.json > $OUT/bench.txt 2>&1
echo "bench: exit $? at $SECONDS s"; head -2 $OUT/bench.txt
T=$(mktemp -d)
for s in "layernorm bf16 5120" "layernorm bf16 7168" "layernorm bf16 14336" "rmsnorm bf16 14336" "layernorm bf16 131072" "layernorm fp32 14336" "layernorm fp32 5120" "layernorm bf16 262144"; do
  set -- $s
  [ $SECONDS -lt 165 ] || { echo "tune: out of time before $s"; continue; }
  w=""; [ $2 = bf16 ] && w="--weight-dtype fp32"
  NORMJIT_CACHE_DIR=$T timeout 25 $B/normjit tune --kind $1 --dtype $2 $w --n $3 --m $((67108864 / $3)) --exhaustive 2>>$OUT/tune.err | grep -v "^  fit"
done > $OUT/tune.txt
grep -E "^(layernorm|rmsnorm)" $OUT/tune.txt | cut -c1-40,100-150
ARGS="--graph --kinds layernorm,rmsnorm --dtypes bf16,fp32 --weights fp32 --n 5120,7168,14336,131072,262144"
NORMJIT_CACHE_DIR=$(mktemp -d) timeout 20 $B/normjit bench $ARGS --json $OUT/heuristic.json > $OUT/heuristic.txt 2>&1
NORMJIT_CACHE_DIR=$T timeout 20 $B/normjit bench $ARGS --json $OUT/tuned.json > $OUT/tuned.txt 2>&1
python3 bench/compare_bench.py $OUT/heuristic.json $OUT/tuned.json | cut -c1-230
echo "done at $SECONDS s"
