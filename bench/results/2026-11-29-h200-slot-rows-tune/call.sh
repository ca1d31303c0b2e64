#!/usr/bin/env bash
# Session 36, call 4 (H200), build-device = the commit of this script (f24bfaa's rules: the fp32
# element-row rule with its upper limit). Exhaustive tuning of 16-bit rows aligned to 4 bytes
# (N ≡ 2 mod 4: slots of two elements) and 8 bytes (N ≡ 4 mod 8) from 5002, where call 1 found
# the staged heuristic 1.18-1.41x the tuned best (6002, 14002); then bench --graph of the
# heuristic against the tuned database.
set -uo pipefail
B=build-device/normjit
db=$(mktemp -d)
tune() {  # kind dtype n align
  [ $SECONDS -lt 400 ] || { echo "out of time before $*"; return; }
  NORMJIT_CACHE_DIR=$db timeout 60 $B tune --kind $1 --dtype $2 --weight-dtype fp32 --n $3 --align $4 \
    --m $((67108864 / $3)) --exhaustive >>$OUT/tune.txt 2>>$OUT/tune.err
  echo "$* exit $? at $SECONDS s"
}
for n in 5002 7002 8002 10002 12002 16002; do tune layernorm bf16 $n 4; tune rmsnorm bf16 $n 4; done
for n in 6002 14002; do tune layernorm fp16 $n 4; tune rmsnorm fp16 $n 4; done
for n in 6004 10004 14004; do tune layernorm bf16 $n 8; tune rmsnorm bf16 $n 8; done
cp $db/tuning.toml $OUT/ 2>/dev/null
bench() {  # name dtype n-list
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 60 $B bench --graph --kinds layernorm,rmsnorm --dtypes $2 --weights fp32 \
    --n $3 --json $OUT/$1-heuristic.json >$OUT/$1-heuristic.txt 2>&1
  NORMJIT_CACHE_DIR=$db timeout 60 $B bench --graph --kinds layernorm,rmsnorm --dtypes $2 --weights fp32 \
    --n $3 --json $OUT/$1-tuned.json >$OUT/$1-tuned.txt 2>&1
  python3 bench/compare_bench.py $OUT/$1-heuristic.json $OUT/$1-tuned.json > $OUT/$1-compare.txt 2>&1
  cut -c1-170 $OUT/$1-compare.txt
}
bench bf16 bf16 5002,6002,7002,8002,10002,12002,14002,16002,6004,10004,14004
bench fp16 fp16 6002,14002
grep -E '^(layernorm|rmsnorm)' $OUT/tune.txt | sed -E 's/ dy=(bf16|fp16) dx=(bf16|fp16) weight=fp32 \+weight( \+bias)?//' | cut -c1-300
echo "done at $SECONDS s"
tar czf $OUT/logs.tgz -C $OUT tune.txt tune.err $(cd $OUT && ls *-heuristic.* *-tuned.*) 2>/dev/null
(cd $OUT && rm -f tune.txt tune.err *-heuristic.* *-tuned.*)
