#!/usr/bin/env bash
# Session 59, call 5 (H200). build-device: as call 4. Exhaustive tuning, parallel norms, where call
# 4's A/B read slower: RMSNorm bf16 with bf16 γ at 5120 / 6144 / 8192 (0.83 / 0.90 / 0.98x in the
# rule's one block), LayerNorm bf16 fp32 γ 24576 (0.96x, config unchanged: the held g), fp16 fp16
# γ 32768 (0.98x); RMSNorm bf16 fp32 γ 5120 and fp16 fp16 γ 5120 beside them (1.11 / 1.17x).
set -uo pipefail
B=build-device
mkdir -p $OUT/logs
while read -r k d w n m; do
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 100 $B/normjit tune --exhaustive --kind $k --dtype $d --weight-dtype $w \
    --n $n --m $m --parallel > $OUT/logs/tune-$k-$d-$w-$n.txt 2>&1
  echo "$k $d $w $n exit $? at $SECONDS s"
  grep "exhaustive best" $OUT/logs/tune-$k-$d-$w-$n.txt | sed 's/  */ /g; s/threads_per_row=[0-9]* //g' | cut -c1-330
done <<'SHAPES'
rmsnorm bf16 same 5120 13107
rmsnorm bf16 same 6144 10922
rmsnorm bf16 same 8192 8192
rmsnorm bf16 fp32 5120 13107
rmsnorm fp16 same 5120 13107
layernorm bf16 fp32 24576 2730
layernorm fp16 same 32768 2048
SHAPES
tar czf $OUT/call5.tgz -C $OUT logs && rm -rf $OUT/logs
