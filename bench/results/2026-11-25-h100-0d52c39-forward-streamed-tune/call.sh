#!/usr/bin/env bash
# Session 25, call 8 (H100), 0d52c39: exhaustive forward tuning of the 16-bit LayerNorm rows the
# session left streamed (a cluster would hold them only in blocks narrower than 1024 threads):
# which of the search space's candidates is fastest there, for the next session's rule. No code
# change; L2 flushed between timings (the tuner's method), so times sit above bench's.
set -uo pipefail
export NORMJIT_CACHE_DIR=$(mktemp -d)
for nm in 163840:409 98304:682 36864:1820; do
  n=${nm%:*} m=${nm#*:}
  timeout 100 build-device/normjit tune --forward --exhaustive --kind layernorm --dtype bf16 --weight-dtype fp32 \
    --n $n --m $m --cache-dir $NORMJIT_CACHE_DIR > $OUT/tune-$n.txt 2> $OUT/tune-$n.err
  echo "N=$n M=$m: exit $?"; tail -8 $OUT/tune-$n.txt
done
