#!/usr/bin/env bash
# Session 50, call 6 (H200). build-device as call 5 (the final rule). Data for entry 64's next 1:
# tune (the search space, M = 64 Mi / N) the gate after the norm at 10752-12288, where the one
# block of 16 elements a thread spills 88-140 bytes, four dtype pairs.
set -uo pipefail
B=build-device
run() {  # $1 = label, rest = tune args
  local label=$1; shift
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 60 $B/normjit tune --kind rmsnorm "$@" 2>>$OUT/tune-12k.err | grep -E "^rmsnorm" | sed "s/^/$label /"
}
for n in 10752 11264 11776 12288; do
  m=$((67108864 / n))
  run bf16f32 --dtype bf16 --weight-dtype fp32 --gate after-norm --n $n --m $m
  run bf16bf16 --dtype bf16 --gate after-norm --n $n --m $m
  run fp16f16 --dtype fp16 --gate after-norm --n $n --m $m
  run fp16f32 --dtype fp16 --weight-dtype fp32 --gate after-norm --n $n --m $m
done > $OUT/tune-12k.txt
echo "tune exit $? at $SECONDS s"
sed -E 's/threads_per_row=[0-9]+ //; s/vec=8 //; s/registers //; s/ +/ /g' $OUT/tune-12k.txt | cut -c1-200
grep final $OUT/tune-12k.err | sed -E 's/.*rmsnorm N=([0-9]+) x=(\w+) .*weight=(\w+) .* final (.*): ([0-9.]+) us/\1 \2\3 \5 \4/; s/threads_per_row=[0-9]+ //; s/vec=8 //; s/registers //'
