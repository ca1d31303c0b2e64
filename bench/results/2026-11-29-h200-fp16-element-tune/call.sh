#!/usr/bin/env bash
# Session 35, call 5 (H200), build-device = 9321834: call 4 showed fp16 rows of an element
# 1.2-1.6x slower than bf16 under the unaligned prefetch rule (LN 1505 214 µs against 136).
# Exhaustive tuning of fp16 rows aligned to 2 and 4 bytes where the rule applies (the
# heuristic's candidate is timed first), and LN bf16 1537 (kept at 16 a thread).
set -uo pipefail
B=build-device
db=$(mktemp -d)
for spec in layernorm:fp16:1025:2 rmsnorm:fp16:1025:2 layernorm:fp16:1505:2 rmsnorm:fp16:1505:2 \
            layernorm:fp16:2049:2 rmsnorm:fp16:2049:2 layernorm:fp16:2505:2 rmsnorm:fp16:2505:2 \
            layernorm:fp16:1506:4 layernorm:fp16:3002:4 layernorm:bf16:1025:2 layernorm:bf16:1537:2; do
  IFS=: read -r kind dtype n align <<<"$spec"
  [ $SECONDS -lt 200 ] || { echo "out of time before $spec"; break; }
  NORMJIT_CACHE_DIR=$db timeout 40 $B/normjit tune --kind $kind --dtype $dtype --weight-dtype fp32 --n $n --align $align \
    --m $((67108864 / n)) --exhaustive >>$OUT/tune.txt 2>>$OUT/tune.err
done
cp $db/tuning.toml $OUT/ 2>/dev/null
grep -E '^(layernorm|rmsnorm)' $OUT/tune.txt | sed -E 's/ dy=fp16 dx=fp16 weight=fp32 \+weight( \+bias)?//' | cut -c1-250
echo "done at $SECONDS s"
tar -C $OUT -czf $OUT/logs.tgz tune.txt tune.err && rm -f $OUT/tune.txt $OUT/tune.err
