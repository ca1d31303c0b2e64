#!/usr/bin/env bash
# Session 14, call 12: exhaustive tuning of fp32 LN/RMS at 3072 (M 21845), where call 11's new
# rule (prefetch in 384-thread blocks) was not measured before; and LN 7168 (M 9362).
set -uo pipefail
b=build-device; o=$OUT
export NORMJIT_CACHE_DIR=$(mktemp -d)
for k in layernorm rmsnorm; do
  timeout 60 $b/normjit tune --kind $k --n 3072 --m 21845 --dtype fp32 --weight-dtype fp32 --exhaustive
done > $o/tune.txt 2>/dev/null
timeout 60 $b/normjit tune --kind layernorm --n 7168 --m 9362 --dtype fp32 --weight-dtype fp32 --exhaustive >> $o/tune.txt 2>/dev/null
grep -E "^(layer|rms)" $o/tune.txt | cut -c1-20,100-
grep "fit " $o/tune.txt | sort -t'|' -k3 -n | head -12 | cut -c1-30,95-
