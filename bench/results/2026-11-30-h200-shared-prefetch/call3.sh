#!/usr/bin/env bash
# Session 46, call 3 (H200). build-device: the rule (rows_copied_ahead): 16-bit rows of one sum
# (RMSNorm) of 65537-262144 columns, 128 rows or more, take blocks of 16 elements a thread, one an
# SM, copying the next row ahead. v/old = 1ece14e (calls 1-2: the candidates, no rule).
# 1. A/B old -> new, bench --graph, M·N = 64 Mi: RMS bf16/fp16, fp32 and bf16 γ, 65536-262144
#    (65536 unchanged: the control), and LN (unchanged).
# 2. Exhaustive tuning of fp32 rows of 32768-262144 (call 2: LN fp32 65536's heuristic 1.14x
#    its best, RMS 1.13x): the data for a rule.
set -uo pipefail
B=build-device
mkdir -p $OUT/ab
scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab \
  rms "--graph --kinds rmsnorm --dtypes bf16,fp16 --n 65536,98304,131072,163840,196608,262144" \
  ln "--graph --kinds layernorm --dtypes bf16 --weights fp32 --n 131072,262144" > $OUT/ab.txt 2>&1
echo "ab exit $? at $SECONDS s"; cat $OUT/ab.txt | grep -v '^bench-ab' | tail -40
for shape in "layernorm 32768" "rmsnorm 32768" "layernorm 40960" "rmsnorm 40960" "layernorm 49152" "rmsnorm 49152" \
             "layernorm 65536" "rmsnorm 65536" "layernorm 98304" "rmsnorm 98304" "layernorm 131072" "rmsnorm 131072" \
             "layernorm 196608" "rmsnorm 196608" "layernorm 262144"; do
  set -- $shape
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 90 $B/normjit tune --kind $1 --n $2 --dtype fp32 --weight-dtype fp32 \
    --m $((67108864 / $2)) --exhaustive > $OUT/tune-fp32-$1-$2.txt 2>&1
  echo "tune fp32 $shape exit $? at $SECONDS s"; grep -E '^(layer|rms)norm N=' $OUT/tune-fp32-$1-$2.txt | sed 's/ \+/ /g'
done
tar czf $OUT/call3-logs.tgz -C $OUT ab $(cd $OUT && ls tune-fp32-*.txt) 2>/dev/null; rm -rf $OUT/ab $OUT/tune-fp32-*.txt
