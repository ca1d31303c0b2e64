#!/usr/bin/env bash
# Session 56, call 4 (H200). Every candidate config timed (normjit tune) for the fused options on
# rows of an element (odd N), with two builds: v/mid = 0c66f20 (the marks only) and build-device
# = d8c7d20 (the marks and recover_slot without its branch on `valid`). Call 3 found the latter's
# heuristic kernels up to 2.7x slower where ptxas issued each slot's y load just before its use;
# prefetching configs carry the loads across the row loop, where ptxas cannot sink them.
set -uo pipefail
B=build-device
tune_set() {  # BIN LABEL
  while read -r kind dtype n m opts; do
    align=2; [ $dtype = fp32 ] && align=4
    NORMJIT_CACHE_DIR=$(mktemp -d) timeout 60 $1 tune --kind $kind --dtype $dtype --weight-dtype fp32 --n $n --align $align --m $m $opts 2>/dev/null \
      | grep " M<=" | sed "s/^/$2 /" >> $OUT/tune.txt
  done <<'SHAPES'
layernorm bf16 1001 67041 --recompute-from-output
layernorm bf16 2050 32736 --recompute-from-output
layernorm bf16 4095 16388 --recompute-from-output
rmsnorm bf16 1001 67041 --recompute-from-output
rmsnorm bf16 2050 32736 --recompute-from-output
rmsnorm bf16 4095 16388 --recompute-from-output
layernorm fp32 1001 67041 --recompute-from-output
layernorm fp32 4095 16388 --recompute-from-output
rmsnorm fp32 1001 67041 --recompute-from-output
rmsnorm fp32 4095 16388 --recompute-from-output
layernorm bf16 1001 67041 --residual
layernorm bf16 4095 16388 --residual
layernorm bf16 1001 67041 --fused all
layernorm bf16 4095 16388 --fused all
layernorm bf16 2050 32736 --parallel
layernorm bf16 4095 16388 --parallel
SHAPES
  echo "$2 done at $SECONDS s"
}
tune_set $B/v/mid mid
tune_set $B/normjit new
cut -c1-250 $OUT/tune.txt
