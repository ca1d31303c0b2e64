#!/usr/bin/env bash
# Session 17, call 2 (e5337d7 build, as call 1): is the streamed forward bound by γ/β's reads
# through L2? The same shapes with bf16 γ/β (half their bytes) against fp32, every candidate.
set -uo pipefail
b=build-device; o=$OUT
export NORMJIT_CACHE_DIR=$(mktemp -d)
for k in layernorm rmsnorm; do for w in same fp32; do for n in 65536 262144; do
  timeout 60 $b/normjit tune --forward --exhaustive --kind $k --dtype bf16 --weight-dtype $w --n $n --m $((67108864 / n)) > $o/t.txt 2>&1
  echo "== $k bf16 weight=$w N=$n"; grep " fit " $o/t.txt | grep -E "streamed|cluster" | sed -E 's/.*M<=[0-9]+ \| //' | sort -t'|' -k2 -n | head -4
done; done; done
rm -f $o/t.txt
