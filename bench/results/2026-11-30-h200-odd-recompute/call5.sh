#!/usr/bin/env bash
# Session 56, call 5 (H200). build-device = 7682d8c (the marks; recover_slot's branch back).
# Every candidate config timed (normjit tune; each candidate's time in tune-progress.txt) for the
# fused options on rows of an element or two (odd N and 2050), bf16 fp32 γ and fp32 and fp16:
# the data for a rule of their own (the heuristic gives them the option-free blocks of 16
# elements a thread, which call 4 found 1.1-2.4x slower than the best candidate).
set -uo pipefail
B=build-device
while read -r kind dtype n opts; do
  align=2; [ $dtype = fp32 ] && align=4; [ $n = 2050 ] && align=4
  m=$(( 67108864 / n ))
  echo "### $kind $dtype $n $opts" >> $OUT/tune-progress.txt
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 60 $B/normjit tune --kind $kind --dtype $dtype --weight-dtype fp32 --n $n --align $align --m $m $opts \
    2>> $OUT/tune-progress.txt | grep " M<=" >> $OUT/tune.txt
done <<'SHAPES'
layernorm bf16 1001 --recompute-from-output
layernorm bf16 1537 --recompute-from-output
layernorm bf16 2050 --recompute-from-output
layernorm bf16 3001 --recompute-from-output
layernorm bf16 4095 --recompute-from-output
rmsnorm bf16 1001 --recompute-from-output
rmsnorm bf16 1537 --recompute-from-output
rmsnorm bf16 2050 --recompute-from-output
rmsnorm bf16 3001 --recompute-from-output
rmsnorm bf16 4095 --recompute-from-output
layernorm bf16 1001 --residual
layernorm bf16 1537 --residual
layernorm bf16 2050 --residual
layernorm bf16 3001 --residual
layernorm bf16 4095 --residual
rmsnorm bf16 1001 --residual
rmsnorm bf16 3001 --residual
rmsnorm bf16 4095 --residual
layernorm bf16 1001 --fused all
layernorm bf16 1537 --fused all
layernorm bf16 2050 --fused all
layernorm bf16 3001 --fused all
layernorm bf16 4095 --fused all
layernorm bf16 1001 --parallel
layernorm bf16 1537 --parallel
layernorm bf16 2050 --parallel
layernorm bf16 3001 --parallel
layernorm bf16 4095 --parallel
rmsnorm bf16 1001 --gate after-norm
rmsnorm bf16 2050 --gate after-norm
rmsnorm bf16 3001 --gate after-norm
rmsnorm bf16 4095 --gate after-norm
layernorm fp32 1001 --recompute-from-output
layernorm fp32 2050 --recompute-from-output
layernorm fp32 4095 --recompute-from-output
rmsnorm fp32 1001 --recompute-from-output
rmsnorm fp32 4095 --recompute-from-output
layernorm fp32 1001 --residual
layernorm fp32 4095 --residual
layernorm fp16 1001 --recompute-from-output
layernorm fp16 4095 --recompute-from-output
layernorm fp16 1001 --residual
layernorm fp16 4095 --residual
SHAPES
echo "tuned at $SECONDS s"
cut -c1-260 $OUT/tune.txt
tar czf $OUT/call5.tgz -C $OUT tune.txt tune-progress.txt && rm -f $OUT/tune-progress.txt
