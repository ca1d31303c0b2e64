#!/usr/bin/env bash
# Session 51, call 6 (H200), the device time left. build-device at 3e577c5. Leads for the next
# session: LayerNorm fp16 at 1000 (16-byte aligned rows; a staged block at 73% of copy where bf16
# takes shared sums at 80-83%), 1024 and 5120 (87-90%), and bf16 1000 beside them: `normjit tune`,
# the search space, M = 64 Mi / N; finalists' times in tune.err.
set -uo pipefail
B=build-device
run() {  # $1 = label, rest = tune args
  local label=$1; shift
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 40 $B/normjit tune --kind layernorm "$@" 2>>$OUT/tune.err | grep -E "^layernorm" | sed "s/^/$label /"
}
{
for n in 1000 1024 5120; do
  m=$((67108864 / n))
  run fp16f16 --n $n --m $m --dtype fp16
  run fp16f32 --n $n --m $m --dtype fp16 --weight-dtype fp32
done
run bf16f32 --n 1000 --m 67108 --dtype bf16 --weight-dtype fp32
} > $OUT/tune.txt
echo "tune exit $? at $SECONDS s"
sed -E 's/x=[a-z0-9]+ dy=[a-z0-9]+ dx=[a-z0-9]+ weight=[a-z0-9]+ //; s/threads_per_row=[0-9]+ //; s/ +/ /g' $OUT/tune.txt | cut -c1-230
