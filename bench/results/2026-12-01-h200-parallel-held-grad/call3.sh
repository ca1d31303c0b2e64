#!/usr/bin/env bash
# Session 59, call 3 (H200). build-device: as call 1 (variant B). Exhaustive tuning of parallel
# norms in the other 16-bit type combinations (fp16 with fp32 γ, bf16 and fp16 with γ in x's
# dtype) at 4096-32768, M = 64 Mi / N, to see whether call 2's winners hold across dtypes.
set -uo pipefail
B=build-device
mkdir -p $OUT/logs
for dw in fp16:fp32 bf16:same fp16:same; do
  d=${dw%:*} w=${dw#*:}
  for k in layernorm rmsnorm; do
    for nm in 4096:16384 8192:8192 16384:4096 32768:2048; do
      n=${nm%:*} m=${nm#*:}
      NORMJIT_CACHE_DIR=$(mktemp -d) timeout 100 $B/normjit tune --exhaustive --kind $k --dtype $d --weight-dtype $w \
        --n $n --m $m --parallel > $OUT/logs/tune-$k-$d-$w-$n.txt 2>&1
      echo "$k $d $w $n exit $? at $SECONDS s"
    done
  done
done
grep -h "+parallel" $OUT/logs/tune-*.txt | sed 's/  */ /g' | cut -c1-400
tar czf $OUT/call3.tgz -C $OUT logs && rm -rf $OUT/logs
