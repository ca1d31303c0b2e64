#!/usr/bin/env bash
# Session 50, call 1 (H200). build-device at HEAD (0839b08). Entry 63's next 1: the gate's
# heuristic configs spill at 36864-57344 and 98304-131072; tune (the search space, M = 64 Mi / N)
# both gate orders there, three dtype pairs, and fp16 after the norm at 10240-14336.
set -uo pipefail
B=build-device
run() {  # $1 = label, rest = tune args
  local label=$1; shift
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 60 $B/normjit tune --kind rmsnorm "$@" 2>>$OUT/tune.err | grep -E "^rmsnorm" | sed "s/^/$label /"
}
{
for n in 36864 40960 45056 49152 53248 57344 73728 81920 98304 114688 131072; do
  m=$((67108864 / n))
  for g in after-norm before-norm; do
    run bf16f32 --dtype bf16 --weight-dtype fp32 --gate $g --n $n --m $m
    run fp16f16 --dtype fp16 --gate $g --n $n --m $m
    run fp16f32 --dtype fp16 --weight-dtype fp32 --gate $g --n $n --m $m
  done
  echo "n $n done at $SECONDS s" >&2
done
for n in 10240 12288 14336; do
  m=$((67108864 / n))
  run fp16f32 --dtype fp16 --weight-dtype fp32 --gate after-norm --n $n --m $m
  run fp16f16 --dtype fp16 --gate after-norm --n $n --m $m
  run bf16f32 --dtype bf16 --weight-dtype fp32 --gate after-norm --n $n --m $m
done
} > $OUT/tune.txt
echo "tune exit $? at $SECONDS s"
awk '{print $1, $3, $(NF-0)}' $OUT/tune.txt | head -0
cut -c1-60,100-200 $OUT/tune.txt | sed -E 's/ +/ /g'
tail -3 $OUT/tune.err
