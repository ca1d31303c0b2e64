#!/usr/bin/env bash
# Session 37, call 2 (H200), build-device = the commit of this script (session 36's rules).
# Exhaustive tuning where session 36 left rows untuned (bench/NOTES.md entry 49, next 1 and 3):
# fp32 rows aligned to 8 bytes (N ≡ 2 mod 4: slots of two elements), 2002-40002, whose rule past
# 8192 was copied from the rows of an element untuned (RMS 14002 0.87x) and which read 81-92% of
# copy up to 8192; and 16-bit rows aligned to 8 bytes (N ≡ 4 mod 8: slots of four) up to 8192,
# still staged (6004's best was 1.28x the heuristic). Then bench --graph of the heuristic
# against the tuned database.
set -uo pipefail
B=build-device/normjit
db=$(mktemp -d)
tune() {  # kind dtype n align
  [ $SECONDS -lt 420 ] || { echo "out of time before $*"; return; }
  NORMJIT_CACHE_DIR=$db timeout 60 $B tune --kind $1 --dtype $2 --weight-dtype fp32 --n $3 --align $4 \
    --m $((67108864 / $3)) --exhaustive >>$OUT/tune.txt 2>>$OUT/tune.err
  echo "$* exit $? at $SECONDS s"
}
for n in 2002 4002 6002 8002 10002 12002 14002 16002 24002 32002 40002; do tune layernorm fp32 $n 8; tune rmsnorm fp32 $n 8; done
for n in 4100 5004 6004 7004 8004; do tune layernorm bf16 $n 8; tune rmsnorm bf16 $n 8; done
cp $db/tuning.toml $OUT/ 2>/dev/null
bench() {  # name dtype n-list
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 90 $B bench --graph --kinds layernorm,rmsnorm --dtypes $2 --weights fp32 \
    --n $3 --json $OUT/$1-heuristic.json >$OUT/$1-heuristic.txt 2>&1
  NORMJIT_CACHE_DIR=$db timeout 90 $B bench --graph --kinds layernorm,rmsnorm --dtypes $2 --weights fp32 \
    --n $3 --json $OUT/$1-tuned.json >$OUT/$1-tuned.txt 2>&1
  python3 bench/compare_bench.py $OUT/$1-heuristic.json $OUT/$1-tuned.json > $OUT/$1-compare.txt 2>&1
  cut -c1-170 $OUT/$1-compare.txt
}
bench fp32 fp32 2002,4002,6002,8002,10002,12002,14002,16002,24002,32002,40002
bench bf16 bf16 4100,5004,6004,7004,8004
grep -E '^(layernorm|rmsnorm)' $OUT/tune.txt | sed -E 's/ dy=(bf16|fp16|fp32) dx=(bf16|fp16|fp32) weight=fp32 \+weight( \+bias)?//' | cut -c1-300
echo "done at $SECONDS s"
tar czf $OUT/logs.tgz -C $OUT tune.txt tune.err $(cd $OUT && ls *-heuristic.* *-tuned.*) 2>/dev/null
(cd $OUT && rm -f tune.txt tune.err *-heuristic.* *-tuned.*)
