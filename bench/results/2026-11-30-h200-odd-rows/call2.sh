#!/usr/bin/env bash
# Session 51, call 2 (H200). build-device at bd2ae45 (HEAD's kernels). Call 1's tune found the
# phased block beating the heuristic's rows of an element at RMS bf16 4095 (1.107x), and rows of
# an element beating the phased halves at LN bf16 fp32 γ 5003 (1.073x). Tune odd N of 255-6001
# (rows aligned to 2 bytes, in phase: contiguous tensors), both kinds, three dtype pairs, at
# M = 64 Mi / N, for a rule; finalists' times in tune.err.
set -uo pipefail
B=build-device
run() {  # $1 = label, rest = tune args
  local label=$1; shift
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 60 $B/normjit tune --align 2 "$@" 2>>$OUT/tune.err | grep -E "^(rms|layer)norm" | sed "s/^/$label /"
}
{
for n in 1001 1537 2001 2047 2559 3001 3583 4095 4607 4999 5003 5501 6001 255 511 777; do
  m=$((67108864 / n))
  for k in rmsnorm layernorm; do
    run bf16f32 --kind $k --n $n --m $m --dtype bf16 --weight-dtype fp32
    [ $n -lt 1000 ] && continue
    run bf16bf16 --kind $k --n $n --m $m --dtype bf16
    run fp16f32 --kind $k --n $n --m $m --dtype fp16 --weight-dtype fp32
  done
  echo "n $n done at $SECONDS s" >&2
done
} > $OUT/tune.txt
echo "tune exit $? at $SECONDS s"
awk '{printf "%s %s %s %s %s %s\n", $1, $2, $3, $(NF-0), $0 ~ /phased/ ? "phased" : "", ""}' $OUT/tune.txt | head -0
sed -E 's/x=[a-z0-9]+ dy=[a-z0-9]+ dx=[a-z0-9]+ weight=[a-z0-9]+ //; s/threads_per_row=[0-9]+ //; s/ +/ /g' $OUT/tune.txt | cut -c1-230
