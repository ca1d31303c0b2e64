#!/usr/bin/env bash
# Session 34, call 6 (H200). build-device/normjit = a8e56d9: staged backward rows with the
# block's thread index bounded for the compiler (block_thread; LN bf16 5003's staged kernel
# 2176 -> 1440 SASS instructions). build-device/v/old = 6549637 (before it).
#  1. A/B, graph replays: odd 16-bit N (interleaved staged rows, and the unchanged rows of an
#     element a thread as control), aligned staged rows (1000) and the grid clusters (262144, 1M).
#  2. Odd rows tuned exhaustively at align 2 with the new kernels, then bench heuristic vs tuned.
set -uo pipefail
B=build-device
mkdir -p $OUT/ab
timeout 300 scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab \
  odd "--graph --weights fp32 --dtypes bf16,fp16 --n 1001,2049,4095,5003,8191,12289,16385" \
  staged "--graph --weights fp32 --dtypes bf16,fp32 --n 1000,262144,1048576" > $OUT/ab.txt 2>&1
echo "ab: exit $? at $SECONDS s"; grep -E "median" $OUT/ab.txt | head
db=$(mktemp -d)
for spec in layernorm:bf16:5003 rmsnorm:bf16:5003 layernorm:bf16:8191 rmsnorm:bf16:8191 layernorm:bf16:12289 layernorm:bf16:2049; do
  IFS=: read -r kind dtype n <<<"$spec"
  [ $SECONDS -lt 420 ] || break
  NORMJIT_CACHE_DIR=$db timeout 60 $B/normjit tune --kind $kind --dtype $dtype --weight-dtype fp32 --n $n --align 2 \
    --m $((67108864 / n)) --exhaustive >>$OUT/tune.txt 2>>$OUT/tune.err
done
args=(--graph --kinds layernorm,rmsnorm --dtypes bf16 --weights fp32 --n 2049,5003,8191,12289)
NORMJIT_CACHE_DIR=$(mktemp -d) timeout 60 $B/normjit bench "${args[@]}" --json $OUT/heuristic.json >$OUT/heuristic.txt 2>&1
NORMJIT_CACHE_DIR=$db timeout 60 $B/normjit bench "${args[@]}" --json $OUT/tuned.json >$OUT/tuned.txt 2>&1
python3 bench/compare_bench.py $OUT/heuristic.json $OUT/tuned.json > $OUT/compare.txt 2>&1
cut -c1-170 $OUT/compare.txt; cp $db/tuning.toml $OUT/ 2>/dev/null
grep -E '^(layernorm|rmsnorm)' $OUT/tune.txt | cut -c1-60,90-400 | head -20
tar -C $OUT -czf $OUT/logs.tgz ab tune.txt tune.err heuristic.txt tuned.txt && rm -rf $OUT/ab $OUT/tune.txt $OUT/tune.err $OUT/heuristic.txt $OUT/tuned.txt
echo "done at $SECONDS s"
