#!/usr/bin/env bash
# Session 61, call 5 (H200). build-device: as call 4. Call 2's exhaustive forward tuning read
# RMSNorm 98304 and 196608 1.18-1.23x off the heuristic (clusters of 640-768 threads; the best a
# cluster of 8 of 384 with γ held, and streamed clusters of two), LayerNorm 196608 1.09x
# (streamed 512-thread blocks). Map the long rows between the powers of two before a rule:
# tune --forward --exhaustive, bf16 with fp32 and bf16 γ, M·N = 64 Mi.
set -uo pipefail
B=build-device
mkdir -p $OUT/logs
for n in 40960 49152 81920 98304 114688 163840 196608 229376 327680; do
  for k in layernorm rmsnorm; do
    for w in fp32 same; do
      NORMJIT_CACHE_DIR=$(mktemp -d) timeout 40 $B/normjit tune --forward --exhaustive --kind $k --dtype bf16 --weight-dtype $w --n $n --m $((67108864 / n)) > $OUT/logs/tune-$k-$n-$w.txt 2>&1
      echo "$k $n $w exit $? at $SECONDS s: $(grep -E "^$k forward" $OUT/logs/tune-$k-$n-$w.txt | tail -1 | sed 's/  */ /g; s/x=bf16.*M<=[0-9]* //; s/threads_per_row=[0-9]* //g' | cut -c1-230)"
    done
  done
done
tar czf $OUT/call5.tgz -C $OUT logs && rm -rf $OUT/logs
