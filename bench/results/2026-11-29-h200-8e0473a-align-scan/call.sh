#!/usr/bin/env bash
# Session 35, call 1 (H200), build-device = 8e0473a: rows aligned to 4 and 8 bytes.
# 1) Exhaustive tuning of 16-bit rows at the alignment their contiguous rows have: N ≡ 4 mod 8
#    (8-byte aligned; LN bf16 1500 ran at 36% of copy in session 34) and N ≡ 2 mod 4 (4-byte).
# 2) A scan of the heuristic (bench --graph, contiguous rows, so each N at its own alignment):
#    N = b, b+1, b+2, b+4 for b from 504 to 50000, bf16 and fp32, LN and RMS, fp32 γ: where
#    else does a residue class fall off a cliff?
set -uo pipefail
B=build-device/normjit
db=$(mktemp -d)
for spec in layernorm:bf16:1500:8 rmsnorm:bf16:1500:8 layernorm:bf16:2504:8 rmsnorm:bf16:2504:8 \
            layernorm:bf16:3500:8 layernorm:bf16:1002:4 rmsnorm:bf16:1002:4 layernorm:bf16:2502:4 \
            layernorm:bf16:3502:4 layernorm:fp16:1500:8 layernorm:bf16:6004:8; do
  IFS=: read -r kind dtype n align <<<"$spec"
  [ $SECONDS -lt 230 ] || { echo "out of time before $spec"; break; }
  NORMJIT_CACHE_DIR=$db timeout 60 $B tune --kind $kind --dtype $dtype --weight-dtype fp32 --n $n --align $align \
    --m $((67108864 / n)) --exhaustive >>$OUT/tune.txt 2>>$OUT/tune.err
  echo "$spec exit $? at $SECONDS s"
done
cp $db/tuning.toml $OUT/ 2>/dev/null
args=(--graph --kinds layernorm,rmsnorm --dtypes bf16 --weights fp32 --n 1500,2504,3500,1002,2502,3502,6004)
NORMJIT_CACHE_DIR=$(mktemp -d) timeout 60 $B bench "${args[@]}" --json $OUT/heuristic.json >$OUT/heuristic.txt 2>&1
NORMJIT_CACHE_DIR=$db timeout 60 $B bench "${args[@]}" --json $OUT/tuned.json >$OUT/tuned.txt 2>&1
python3 bench/compare_bench.py $OUT/heuristic.json $OUT/tuned.json > $OUT/compare.txt 2>&1
cut -c1-170 $OUT/compare.txt
grep -E '^(layernorm|rmsnorm)' $OUT/tune.txt | sed -E 's/ x=bf16 dy=bf16 dx=bf16 weight=fp32 \+weight( \+bias)?//' | cut -c1-300
echo "tuning done at $SECONDS s"
ns=""
for b in 504 1000 1504 2000 2504 3000 3504 4000 5000 6000 7000 9000 10000 12000 14000 20000 30000 50000; do
  ns="$ns,$b,$((b+1)),$((b+2)),$((b+4))"
done
NORMJIT_CACHE_DIR=$(mktemp -d) timeout $((560 - SECONDS)) $B bench --graph --kinds layernorm,rmsnorm --dtypes bf16,fp32 \
  --weights fp32 --n ${ns#,} --json $OUT/scan.json >$OUT/scan.txt 2>&1
echo "scan exit $? at $SECONDS s"
tar czf $OUT/logs.tgz -C $OUT tune.txt tune.err heuristic.txt tuned.txt scan.txt 2>/dev/null
rm -f $OUT/tune.txt $OUT/tune.err $OUT/heuristic.txt $OUT/tuned.txt
