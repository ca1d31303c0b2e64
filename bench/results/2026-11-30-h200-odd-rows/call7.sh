#!/usr/bin/env bash
# Session 51, call 7 (H200), the device time left. build-device at 3e577c5. Call 6 found LayerNorm
# 1000 (aligned rows of 125 slots of 8) 1.17-1.30x faster in one-row blocks of 128 threads with
# sums in registers than the heuristic's staged / shared-sums blocks. Tune rows whose slot count
# is odd or short of a warp multiple, 520-2024 (N = 8 mod 16 mostly), both kinds, bf16 fp32 γ and
# fp16 fp16 γ, M = 64 Mi / N: data for a rule (next session).
set -uo pipefail
B=build-device
run() {  # $1 = label, rest = tune args
  local label=$1; shift
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 20 $B/normjit tune "$@" 2>>$OUT/tune.err | grep -E "^(rms|layer)norm" | sed "s/^/$label /"
}
{
for n in 520 744 872 1000 1128 1256 1384 1512 1768 2024; do
  m=$((67108864 / n))
  for k in layernorm rmsnorm; do
    run bf16f32 --kind $k --n $n --m $m --dtype bf16 --weight-dtype fp32
    run fp16f16 --kind $k --n $n --m $m --dtype fp16
  done
  [ $SECONDS -gt 110 ] && break
done
} > $OUT/tune.txt
echo "tune exit $? at $SECONDS s"
sed -E 's/x=[a-z0-9]+ dy=[a-z0-9]+ dx=[a-z0-9]+ weight=[a-z0-9]+ //; s/threads_per_row=[0-9]+ //; s/ +/ /g' $OUT/tune.txt | cut -c1-200
