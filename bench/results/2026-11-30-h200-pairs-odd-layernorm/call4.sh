#!/usr/bin/env bash
# Session 53, call 4 (H200). build-device as call 3 (fd33e17, the rules' final commit).
# 1. The Python package's GPU tests (4 shards). 2. normjit tune of leads (M = 64 Mi / N's
# bucket; finalists in tune.err): RMSNorm's rows in phase of 1025-1151 (phased blocks of 160
# threads, as 1019-1023 had), bf16 fp32 γ and fp16; LayerNorm fp16's rows of an element of
# 1025-1536 (blocks of 96 threads: 1409 lost prefetching), fp16 fp32 γ.
set -uo pipefail
B=build-device
scripts/gpu-environment.sh $B > $OUT/environment.txt 2>&1
NORMJIT_CACHE_DIR=$(mktemp -d) NORMJIT_LIBRARY=$PWD/$B/libnormjit.so timeout 240 python3 python/tests/run.py --shards 4 > $OUT/python-tests.txt 2>&1
echo "python exit $? at $SECONDS s"; tail -6 $OUT/python-tests.txt
run() {  # $1 = label, rest = tune args
  local label=$1; shift
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 40 $B/normjit tune --align 2 "$@" 2>>$OUT/tune.err | grep -E "^(rms|layer)norm" | sed "s/^/$label /"
}
{
for n in 1033 1089 1151; do
  m=$((67108864 / n))
  run bf16f32 --kind rmsnorm --n $n --m $m --dtype bf16 --weight-dtype fp32
  run fp16f16 --kind rmsnorm --n $n --m $m --dtype fp16
done
for n in 1201 1409 1473; do
  run fp16f32 --kind layernorm --n $n --m $((67108864 / n)) --dtype fp16 --weight-dtype fp32
  [ $SECONDS -gt 500 ] && break
done
} > $OUT/tune.txt
echo "tune exit $? at $SECONDS s"
sed -E 's/x=[a-z0-9]+ dy=[a-z0-9]+ dx=[a-z0-9]+ weight=[a-z0-9]+ //; s/threads_per_row=[0-9]+ //; s/ +/ /g' $OUT/tune.txt | cut -c1-220
grep -E " final " $OUT/tune.err | sed -E 's/x=[a-z0-9]+ dy=[a-z0-9]+ dx=[a-z0-9]+ //; s/threads_per_row=[0-9]+ //' | cut -c1-200
