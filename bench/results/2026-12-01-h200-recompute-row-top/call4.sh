#!/usr/bin/env bash
# Session 57, call 4 (H200). build-device as call 3 (337ce0e). Call 2's four configs (the
# heuristic's, it with early_weights, blocks of 8 a thread two an SM, that with early_weights)
# timed by `normjit tune --config` at the recompute's odd N just outside the rule of call 3:
# 1857-2303 (blocks of 128-160) and 3329-3583 (blocks of 224; LN bf16 3329 ran 1177 µs in call 3).
set -uo pipefail
B=build-device
while IFS='|' read -r shape heur rich; do
  set -- $shape; kind=$1 dtype=$2 n=$3 align=$4 m=$5
  [ $SECONDS -gt 200 ] && { echo "out of time at $kind $dtype $n"; break; }
  echo "### $shape" >> $OUT/tune-progress.txt
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 30 $B/normjit tune --kind $kind --dtype $dtype --weight-dtype fp32 --n $n --align $align \
    --m $m --recompute-from-output --config "$heur early_weights" --config "$rich" --config "$rich early_weights" \
    2>> $OUT/tune-progress.txt | grep -E "^config|^ *config" >> $OUT/configs.txt
done <<'SHAPES'
layernorm bf16 1857 2 36138|threads=128 threads_per_row=128 vec=1 registers|threads=256 threads_per_row=256 vec=1 registers min_blocks=2
layernorm bf16 1921 2 34934|threads=128 threads_per_row=128 vec=1 registers|threads=256 threads_per_row=256 vec=1 registers min_blocks=2
layernorm bf16 1985 2 33807|threads=128 threads_per_row=128 vec=1 registers|threads=256 threads_per_row=256 vec=1 registers min_blocks=2
layernorm bf16 2113 2 31759|threads=160 threads_per_row=160 vec=1 registers|threads=288 threads_per_row=288 vec=1 registers min_blocks=2
layernorm bf16 2177 2 30826|threads=160 threads_per_row=160 vec=1 registers|threads=288 threads_per_row=288 vec=1 registers min_blocks=2
layernorm bf16 2241 2 29945|threads=160 threads_per_row=160 vec=1 registers|threads=288 threads_per_row=288 vec=1 registers min_blocks=2
layernorm bf16 2303 2 29139|threads=160 threads_per_row=160 vec=1 registers|threads=288 threads_per_row=288 vec=1 registers min_blocks=2
layernorm bf16 3329 2 20158|threads=224 threads_per_row=224 vec=1 registers|threads=448 threads_per_row=448 vec=1 registers min_blocks=2
layernorm bf16 3393 2 19778|threads=224 threads_per_row=224 vec=1 registers|threads=448 threads_per_row=448 vec=1 registers min_blocks=2
layernorm bf16 3457 2 19412|threads=224 threads_per_row=224 vec=1 registers|threads=448 threads_per_row=448 vec=1 registers min_blocks=2
layernorm bf16 3521 2 19059|threads=224 threads_per_row=224 vec=1 registers|threads=448 threads_per_row=448 vec=1 registers min_blocks=2
layernorm bf16 3583 2 18729|threads=224 threads_per_row=224 vec=1 registers|threads=448 threads_per_row=448 vec=1 registers min_blocks=2
layernorm fp16 1857 2 36138|threads=128 threads_per_row=128 vec=1 registers|threads=256 threads_per_row=256 vec=1 registers min_blocks=2
layernorm fp16 1921 2 34934|threads=128 threads_per_row=128 vec=1 registers|threads=256 threads_per_row=256 vec=1 registers min_blocks=2
layernorm fp16 1985 2 33807|threads=128 threads_per_row=128 vec=1 registers|threads=256 threads_per_row=256 vec=1 registers min_blocks=2
layernorm fp16 2113 2 31759|threads=160 threads_per_row=160 vec=1 registers|threads=288 threads_per_row=288 vec=1 registers min_blocks=2
layernorm fp16 2177 2 30826|threads=160 threads_per_row=160 vec=1 registers|threads=288 threads_per_row=288 vec=1 registers min_blocks=2
layernorm fp16 2241 2 29945|threads=160 threads_per_row=160 vec=1 registers|threads=288 threads_per_row=288 vec=1 registers min_blocks=2
layernorm fp16 2303 2 29139|threads=160 threads_per_row=160 vec=1 registers|threads=288 threads_per_row=288 vec=1 registers min_blocks=2
layernorm fp16 3329 2 20158|threads=224 threads_per_row=224 vec=1 registers|threads=448 threads_per_row=448 vec=1 registers min_blocks=2
layernorm fp16 3393 2 19778|threads=224 threads_per_row=224 vec=1 registers|threads=448 threads_per_row=448 vec=1 registers min_blocks=2
layernorm fp16 3457 2 19412|threads=224 threads_per_row=224 vec=1 registers|threads=448 threads_per_row=448 vec=1 registers min_blocks=2
layernorm fp16 3521 2 19059|threads=224 threads_per_row=224 vec=1 registers|threads=448 threads_per_row=448 vec=1 registers min_blocks=2
layernorm fp16 3583 2 18729|threads=224 threads_per_row=224 vec=1 registers|threads=448 threads_per_row=448 vec=1 registers min_blocks=2
layernorm fp32 1857 4 36138|threads=128 threads_per_row=128 vec=1 registers|threads=256 threads_per_row=256 vec=1 registers min_blocks=2
layernorm fp32 1921 4 34934|threads=128 threads_per_row=128 vec=1 registers|threads=256 threads_per_row=256 vec=1 registers min_blocks=2
layernorm fp32 1985 4 33807|threads=128 threads_per_row=128 vec=1 registers|threads=256 threads_per_row=256 vec=1 registers min_blocks=2
layernorm fp32 2113 4 31759|threads=160 threads_per_row=160 vec=1 registers|threads=288 threads_per_row=288 vec=1 registers min_blocks=2
layernorm fp32 2177 4 30826|threads=160 threads_per_row=160 vec=1 registers|threads=288 threads_per_row=288 vec=1 registers min_blocks=2
layernorm fp32 2241 4 29945|threads=160 threads_per_row=160 vec=1 registers|threads=288 threads_per_row=288 vec=1 registers min_blocks=2
layernorm fp32 2303 4 29139|threads=160 threads_per_row=160 vec=1 registers|threads=288 threads_per_row=288 vec=1 registers min_blocks=2
layernorm fp32 3329 4 20158|threads=224 threads_per_row=224 vec=1 registers|threads=448 threads_per_row=448 vec=1 registers min_blocks=2
layernorm fp32 3393 4 19778|threads=224 threads_per_row=224 vec=1 registers|threads=448 threads_per_row=448 vec=1 registers min_blocks=2
layernorm fp32 3457 4 19412|threads=224 threads_per_row=224 vec=1 registers|threads=448 threads_per_row=448 vec=1 registers min_blocks=2
layernorm fp32 3521 4 19059|threads=224 threads_per_row=224 vec=1 registers|threads=448 threads_per_row=448 vec=1 registers min_blocks=2
layernorm fp32 3583 4 18729|threads=224 threads_per_row=224 vec=1 registers|threads=448 threads_per_row=448 vec=1 registers min_blocks=2
rmsnorm bf16 1857 2 36138|threads=128 threads_per_row=128 vec=1 registers|threads=256 threads_per_row=256 vec=1 registers min_blocks=2
rmsnorm bf16 1921 2 34934|threads=128 threads_per_row=128 vec=1 registers|threads=256 threads_per_row=256 vec=1 registers min_blocks=2
rmsnorm bf16 1985 2 33807|threads=128 threads_per_row=128 vec=1 registers|threads=256 threads_per_row=256 vec=1 registers min_blocks=2
rmsnorm bf16 2113 2 31759|threads=160 threads_per_row=160 vec=1 registers|threads=288 threads_per_row=288 vec=1 registers min_blocks=2
rmsnorm bf16 2177 2 30826|threads=160 threads_per_row=160 vec=1 registers|threads=288 threads_per_row=288 vec=1 registers min_blocks=2
rmsnorm bf16 2241 2 29945|threads=160 threads_per_row=160 vec=1 registers|threads=288 threads_per_row=288 vec=1 registers min_blocks=2
rmsnorm bf16 2303 2 29139|threads=160 threads_per_row=160 vec=1 registers|threads=288 threads_per_row=288 vec=1 registers min_blocks=2
rmsnorm bf16 3329 2 20158|threads=224 threads_per_row=224 vec=1 registers|threads=448 threads_per_row=448 vec=1 registers min_blocks=2
rmsnorm bf16 3393 2 19778|threads=224 threads_per_row=224 vec=1 registers|threads=448 threads_per_row=448 vec=1 registers min_blocks=2
rmsnorm bf16 3457 2 19412|threads=224 threads_per_row=224 vec=1 registers|threads=448 threads_per_row=448 vec=1 registers min_blocks=2
rmsnorm bf16 3521 2 19059|threads=224 threads_per_row=224 vec=1 registers|threads=448 threads_per_row=448 vec=1 registers min_blocks=2
rmsnorm bf16 3583 2 18729|threads=224 threads_per_row=224 vec=1 registers|threads=448 threads_per_row=448 vec=1 registers min_blocks=2
rmsnorm fp16 1857 2 36138|threads=128 threads_per_row=128 vec=1 registers|threads=256 threads_per_row=256 vec=1 registers min_blocks=2
rmsnorm fp16 1921 2 34934|threads=128 threads_per_row=128 vec=1 registers|threads=256 threads_per_row=256 vec=1 registers min_blocks=2
rmsnorm fp16 1985 2 33807|threads=128 threads_per_row=128 vec=1 registers|threads=256 threads_per_row=256 vec=1 registers min_blocks=2
rmsnorm fp16 2113 2 31759|threads=160 threads_per_row=160 vec=1 registers|threads=288 threads_per_row=288 vec=1 registers min_blocks=2
rmsnorm fp16 2177 2 30826|threads=160 threads_per_row=160 vec=1 registers|threads=288 threads_per_row=288 vec=1 registers min_blocks=2
rmsnorm fp16 2241 2 29945|threads=160 threads_per_row=160 vec=1 registers|threads=288 threads_per_row=288 vec=1 registers min_blocks=2
rmsnorm fp16 2303 2 29139|threads=160 threads_per_row=160 vec=1 registers|threads=288 threads_per_row=288 vec=1 registers min_blocks=2
rmsnorm fp16 3329 2 20158|threads=224 threads_per_row=224 vec=1 registers|threads=448 threads_per_row=448 vec=1 registers min_blocks=2
rmsnorm fp16 3393 2 19778|threads=224 threads_per_row=224 vec=1 registers|threads=448 threads_per_row=448 vec=1 registers min_blocks=2
rmsnorm fp16 3457 2 19412|threads=224 threads_per_row=224 vec=1 registers|threads=448 threads_per_row=448 vec=1 registers min_blocks=2
rmsnorm fp16 3521 2 19059|threads=224 threads_per_row=224 vec=1 registers|threads=448 threads_per_row=448 vec=1 registers min_blocks=2
rmsnorm fp16 3583 2 18729|threads=224 threads_per_row=224 vec=1 registers|threads=448 threads_per_row=448 vec=1 registers min_blocks=2
rmsnorm fp32 1857 4 36138|threads=128 threads_per_row=128 vec=1 registers|threads=256 threads_per_row=256 vec=1 registers min_blocks=2
rmsnorm fp32 1921 4 34934|threads=128 threads_per_row=128 vec=1 registers|threads=256 threads_per_row=256 vec=1 registers min_blocks=2
rmsnorm fp32 1985 4 33807|threads=128 threads_per_row=128 vec=1 registers|threads=256 threads_per_row=256 vec=1 registers min_blocks=2
rmsnorm fp32 2113 4 31759|threads=160 threads_per_row=160 vec=1 registers|threads=288 threads_per_row=288 vec=1 registers min_blocks=2
rmsnorm fp32 2177 4 30826|threads=160 threads_per_row=160 vec=1 registers|threads=288 threads_per_row=288 vec=1 registers min_blocks=2
rmsnorm fp32 2241 4 29945|threads=160 threads_per_row=160 vec=1 registers|threads=288 threads_per_row=288 vec=1 registers min_blocks=2
rmsnorm fp32 2303 4 29139|threads=160 threads_per_row=160 vec=1 registers|threads=288 threads_per_row=288 vec=1 registers min_blocks=2
rmsnorm fp32 3329 4 20158|threads=224 threads_per_row=224 vec=1 registers|threads=448 threads_per_row=448 vec=1 registers min_blocks=2
rmsnorm fp32 3393 4 19778|threads=224 threads_per_row=224 vec=1 registers|threads=448 threads_per_row=448 vec=1 registers min_blocks=2
rmsnorm fp32 3457 4 19412|threads=224 threads_per_row=224 vec=1 registers|threads=448 threads_per_row=448 vec=1 registers min_blocks=2
rmsnorm fp32 3521 4 19059|threads=224 threads_per_row=224 vec=1 registers|threads=448 threads_per_row=448 vec=1 registers min_blocks=2
rmsnorm fp32 3583 4 18729|threads=224 threads_per_row=224 vec=1 registers|threads=448 threads_per_row=448 vec=1 registers min_blocks=2
SHAPES
echo "configs done at $SECONDS s"
mkdir -p $OUT/logs && mv $OUT/tune-progress.txt $OUT/logs/ 2>/dev/null
tar czf $OUT/call4.tgz -C $OUT logs && rm -rf $OUT/logs
