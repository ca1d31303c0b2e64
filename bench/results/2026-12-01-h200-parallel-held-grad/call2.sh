#!/usr/bin/env bash
# Session 59, call 2 (H200). build-device: as call 1 (variant B). Exhaustive tuning of parallel
# norms, bf16 with fp32 γ, at the standing's N and M = 64 Mi / N: the heuristic's configs were
# fitted to the kernel before g was held (LayerNorm 8192-32768 read 0.98-0.99x in call 1).
set -uo pipefail
B=build-device
mkdir -p $OUT/logs
for k in layernorm rmsnorm; do
  for nm in 4096:16384 8192:8192 12288:5461 16384:4096 32768:2048; do
    n=${nm%:*} m=${nm#*:}
    NORMJIT_CACHE_DIR=$(mktemp -d) timeout 100 $B/normjit tune --exhaustive --kind $k --dtype bf16 --weight-dtype fp32 \
      --n $n --m $m --parallel > $OUT/logs/tune-$k-$n.txt 2>&1
    echo "$k $n exit $? at $SECONDS s"
    grep -iE "heuristic|tuned|best" $OUT/logs/tune-$k-$n.txt | head -5
  done
done
tar czf $OUT/call2.tgz -C $OUT logs && rm -rf $OUT/logs
