#!/usr/bin/env bash
# Session 51, call 1 (H200). build-device at HEAD (8698b8d). Issue 3's odd N: 16-bit 4095 reads
# 73-75% of copy in both kinds against 97% at 4096, LayerNorm 5003 64% against RMSNorm's 78%.
# 1. tune (the search space, M = 64 Mi / N) bf16 fp32 γ at 1000, 4095, 5003, both kinds.
# 2. Nsight Compute (bench's first backward: the heuristic's kernel) of RMS 4095 and 4096, LN
#    4095 and 5003: instructions, stalls, DRAM.
set -uo pipefail
B=build-device
run() {  # $1 = label, rest = tune args
  local label=$1; shift
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 80 $B/normjit tune --dtype bf16 --weight-dtype fp32 --align 2 "$@" 2>>$OUT/tune.err | grep -E "^(rms|layer)norm" | sed "s/^/$label /"
}
{
for n in 4095 5003 1000; do
  m=$((67108864 / n))
  for k in rmsnorm layernorm; do run bf16f32 --kind $k --n $n --m $m; done
  echo "n $n done at $SECONDS s" >&2
done
} > $OUT/tune.txt
echo "tune exit $? at $SECONDS s"
cut -c1-60,100-260 $OUT/tune.txt | sed -E 's/ +/ /g'
grep -i final $OUT/tune.err | cut -c1-200 | head -60
for s in rmsnorm:4095 rmsnorm:4096 layernorm:4095 layernorm:5003; do
  k=${s%:*}; n=${s#*:}
  timeout 100 scripts/ncu-profile.sh $OUT/ncu $k-$n -- $B/normjit bench --kinds $k --dtypes bf16 --weights fp32 --n $n --reps 2
  echo "ncu $s at $SECONDS s"
done
for f in $OUT/ncu/*-mix.txt; do echo "== $f"; head -25 $f; done
for f in $OUT/ncu/*-stalls.txt; do echo "== $f"; head -20 $f; done
