#!/usr/bin/env bash
# Session 19, call 3: exhaustive tuning (graph replays, L2 flushed) of the fused sets that stay
# furthest from the option-free row at aligned 16-bit rows of 1025-3072 after 17a4667: the
# gate (both orders), parallel norms and recompute, M·N = 64 Mi. Data for their own rules.
set -uo pipefail
b=build-device; o=$OUT
export NORMJIT_CACHE_DIR=$(mktemp -d)
for n in 1280 1536 1792 2304 2560 3072; do
  m=$(( 67108864 / n ))
  for x in bf16 fp16; do
    [ $x = fp16 ] && [ $n != 1536 ] && [ $n != 2560 ] && continue
    for a in "--kind layernorm --recompute-from-output" "--kind layernorm --parallel" "--kind rmsnorm --parallel" \
             "--kind rmsnorm --recompute-from-output" "--kind rmsnorm --gate after-norm" "--kind rmsnorm --gate before-norm"; do
      timeout 120 $b/normjit tune $a --n $n --dtype $x --weight-dtype fp32 --m $m --exhaustive > $o/t.txt 2>&1
      echo "tune [$a] $n $x exit $?" >&2
      cat $o/t.txt >> $o/tune-all.txt
      grep -E "^(layernorm|rmsnorm) N=" $o/t.txt >> $o/tune-summary.txt
    done
  done
done
rm -f $o/t.txt
gzip -f $o/tune-all.txt
