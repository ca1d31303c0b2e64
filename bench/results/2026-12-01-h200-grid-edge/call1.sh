#!/usr/bin/env bash
# Session 58, call 1 (H200). build-device: 4960795 (session 57's final code).
# The 16-bit rows just past a cluster of 16 (262145-270335 columns): the rules stream them (a
# cluster of 16 holds 262144; grid_stage asks >= 256 slots a block of 132, these have 249-255).
# Per shape `normjit tune --config`: every sm_90 candidate the search space lists (streamed and
# the grid's), and a cluster of 16 blocks of 1024 threads at 3 slots a thread (ptxas: 64
# registers, 68-280 bytes spilled), with and without prefetch/shared weights. Past 270335 too,
# where the grid already runs, to see whether the 3-slot cluster beats it there.
set -uo pipefail
B=build-device
c16="threads=1024 threads_per_row=1024 vec=8 registers cluster=16 shared_sums"
while read -r kind dtype w n align; do
  [ $SECONDS -gt 500 ] && { echo "out of time at $kind $dtype $n"; break; }
  prob=(--kind $kind --dtype $dtype --weight-dtype $w --n $n --align $align)
  mapfile -t cands < <($B/normjit tune "${prob[@]}" --memory-rate 18.4 --m 256 --list 2>/dev/null | sed -n '/sm_90/,$p' | grep 'threads=' | sed 's/^ *//')
  args=()
  for c in "${cands[@]}" "$c16" "$c16 shared_weights" "$c16 prefetch shared_weights"; do args+=(--config "$c"); done
  m=$(( 64 * 1024 * 1024 / n ))
  echo "### $kind $dtype $w $n align $align m $m" | tee -a $OUT/configs.txt >> $OUT/tune-progress.txt
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 60 $B/normjit tune "${prob[@]}" --m $m "${args[@]}" \
    2>> $OUT/tune-progress.txt | grep -E "^config|^ *config|heuristic" >> $OUT/configs.txt
done <<'SHAPES'
layernorm bf16 fp32 262152 16
rmsnorm bf16 fp32 262152 16
layernorm bf16 fp32 266240 16
rmsnorm bf16 fp32 266240 16
layernorm fp16 fp16 264192 16
layernorm bf16 fp32 262145 2
rmsnorm bf16 fp32 262145 2
layernorm bf16 fp32 270328 16
layernorm bf16 fp32 294912 16
rmsnorm bf16 fp32 294912 16
layernorm bf16 fp32 327680 16
layernorm bf16 fp32 393216 16
SHAPES
echo "configs done at $SECONDS s"
mkdir -p $OUT/logs && mv $OUT/tune-progress.txt $OUT/logs/ 2>/dev/null
tar czf $OUT/call1.tgz -C $OUT logs && rm -rf $OUT/logs
