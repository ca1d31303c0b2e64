#!/usr/bin/env bash
# Session 34, call 3 (H200): odd 16-bit rows tuned exhaustively at the alignment their
# contiguous rows have (tune-compare.sh tunes at align 16, i.e. padded rows), with the search
# space's new one-more-block shared-sums candidates; then bench --graph heuristic vs tuned.
set -uo pipefail
B=build-device/normjit
db=$(mktemp -d)
for spec in layernorm:bf16:4095:2 layernorm:bf16:5003:2 rmsnorm:bf16:4095:2 rmsnorm:bf16:5003:2 \
            layernorm:fp16:5003:2 layernorm:bf16:1000:16 rmsnorm:bf16:1000:16; do
  IFS=: read -r kind dtype n align <<<"$spec"
  NORMJIT_CACHE_DIR=$db timeout 60 $B tune --kind $kind --dtype $dtype --weight-dtype fp32 --n $n --align $align \
    --m $((67108864 / n)) --exhaustive >>$OUT/tune.txt 2>>$OUT/tune.err
  echo "$spec tuned: exit $? at $SECONDS s"
done
args=(--graph --kinds layernorm,rmsnorm --dtypes bf16,fp16 --weights fp32 --n 1000,4095,5003)
NORMJIT_CACHE_DIR=$(mktemp -d) timeout 120 $B bench "${args[@]}" --json $OUT/heuristic.json >$OUT/heuristic.txt 2>&1
NORMJIT_CACHE_DIR=$db timeout 120 $B bench "${args[@]}" --json $OUT/tuned.json >$OUT/tuned.txt 2>&1
python3 bench/compare_bench.py $OUT/heuristic.json $OUT/tuned.json > $OUT/compare.txt 2>&1
cut -c1-160 $OUT/compare.txt; cp $db/tuning.toml $OUT/ 2>/dev/null; grep -E 'heuristic|tuned|best' $OUT/tune.txt | head -40
echo "done at $SECONDS s"
