#!/usr/bin/env bash
# Session 58, call 3 (H200). build-device: as calls 1-2 (4960795's code).
# Call 2: clusters of 16 at 3 slots a thread (5-6 for fp32) beat the grid at many rows but lose
# at M = 1 (3x) and tie or lose at M = 16. Here: (a) where the two cross in M (4-64 rows);
# (b) whether the grid also beats today's clusters of 16 (2 slots) at few rows, N <= 262144;
# (c) the grid's time a row against M (393216: 527 us at M = 170 but 524288 292 us at M = 128).
# `normjit tune --config` (the heuristic's config is timed first, then the listed ones).
set -uo pipefail
B=build-device
g() { echo "threads=$1 threads_per_row=$1 vec=$2 registers cluster=132 grid staged stages=5 shared_weights"; }
c16() { echo "threads=1024 threads_per_row=1024 vec=$1 registers cluster=16 shared_sums$2"; }
while IFS='|' read -r shape cfgs; do
  set -- $shape; kind=$1 dtype=$2 w=$3 n=$4 ms=$5
  [ $SECONDS -gt 480 ] && { echo "out of time at $shape"; break; }
  args=(); IFS=';' read -ra cs <<< "$cfgs"
  for c in "${cs[@]}"; do args+=(--config "$(eval echo "$c")"); done
  for m in ${ms//,/ }; do
    echo "### $kind $dtype $w $n m $m" | tee -a $OUT/configs.txt >> $OUT/tune-progress.txt
    NORMJIT_CACHE_DIR=$(mktemp -d) timeout 60 $B/normjit tune --kind $kind --dtype $dtype --weight-dtype $w --n $n --m $m "${args[@]}" \
      2>> $OUT/tune-progress.txt | grep -E "^ *config" >> $OUT/configs.txt
  done
done <<'SHAPES'
layernorm bf16 fp32 262152 4,8,32,64|$(c16 8)
rmsnorm bf16 fp32 262152 4,8,32,64|$(c16 8 " shared_weights")
layernorm bf16 fp32 393216 4,8,32,64|$(c16 8)
rmsnorm bf16 fp32 393216 4,8,32,64|$(c16 8 " shared_weights")
rmsnorm fp32 fp32 327680 4,8,16,32,64|$(c16 4 " shared_weights")
layernorm fp32 fp32 262148 32,64|$(c16 4)
layernorm bf16 fp32 262144 1,4,16,64|$(g 256 8);$(g 128 8)
rmsnorm bf16 fp32 262144 1,4,16,64|$(g 256 8);$(g 128 8)
layernorm bf16 fp32 131072 1,4,16,64|$(g 128 8);$(g 64 8)
rmsnorm bf16 fp32 131072 1,4,16,64|$(g 128 8);$(g 64 8)
layernorm bf16 fp32 65536 1,4,16|$(g 64 8)
layernorm fp32 fp32 262144 1,4,16,64|$(g 512 4);$(g 256 4)
rmsnorm fp32 fp32 131072 1,4,16,64|$(g 256 4);$(g 128 4)
layernorm bf16 fp32 393216 128,256,512|$(c16 8)
rmsnorm bf16 fp32 524288 146,256|$(g 256 8)
layernorm bf16 fp32 1048576 32,128|$(g 256 8)
SHAPES
echo "configs done at $SECONDS s"
mkdir -p $OUT/logs && mv $OUT/tune-progress.txt $OUT/logs/ 2>/dev/null
tar czf $OUT/call3.tgz -C $OUT logs && rm -rf $OUT/logs
