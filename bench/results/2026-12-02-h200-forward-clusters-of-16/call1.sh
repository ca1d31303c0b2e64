#!/usr/bin/env bash
# Session 63, call 1 (H200). build-device: the session's start (2771f42) plus check_forward_config
# letting a launch pin clusters of 16 (sm_90's non-portable size); no heuristic changed.
# Pinned forward configs (bench --forward --graph --config, at the shape's own M):
# 1. fp32 131072 / 262144 (the heuristic: clusters of 8 of 512 two an SM at 82%; streamed at
#    64%): clusters of 16 hold 262144 fp32 at 16 elements a thread in 1024-thread blocks.
# 2. 16-bit 131072 / 262144 (clusters of 4 / 8 of 1024, 61-83%): clusters of 8 / 16.
# 3. LayerNorm fp16 1000 (67% against bf16's 87%, 70-72 registers): warp rows bounded to 64.
set -uo pipefail
B=build-device
mkdir -p $OUT/logs
pin() {  # name bench-args -- configs...
  local name=$1 args=$2; shift 2
  local cfg=()
  for c in "$@"; do cfg+=(--config "$c"); done
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 150 $B/normjit bench --forward --graph $args "${cfg[@]}" --json $OUT/logs/$name.json > $OUT/logs/$name.txt 2>&1
  echo "$name exit $? at $SECONDS s"; grep -E "^(rms|layer)" $OUT/logs/$name.txt | sed 's/  */ /g' | cut -d' ' -f1-2,5,7-9,10-26 | cut -c1-190
}
pin fp32-long "--dtypes fp32 --weights fp32 --n 131072,262144" \
  "threads=1024 threads_per_row=1024 vec=4 registers cluster=16" \
  "threads=1024 threads_per_row=1024 vec=4 registers cluster=16 shared_weights" \
  "threads=1024 threads_per_row=1024 vec=4 registers cluster=16 shared_prefetch=1 shared_weights" \
  "threads=512 threads_per_row=512 vec=4 registers cluster=16 min_blocks=2" \
  "threads=512 threads_per_row=512 vec=4 registers cluster=16 min_blocks=2 shared_weights" \
  "threads=1024 threads_per_row=1024 vec=4 registers cluster=8 shared_weights" \
  "threads=1024 threads_per_row=1024 vec=4 registers cluster=8 shared_prefetch=1 shared_weights"
pin b16-long "--dtypes bf16,fp16 --weights fp32 --n 131072,262144" \
  "threads=1024 threads_per_row=1024 vec=8 registers cluster=16" \
  "threads=1024 threads_per_row=1024 vec=8 registers cluster=16 shared_weights" \
  "threads=1024 threads_per_row=1024 vec=8 registers cluster=16 shared_prefetch=1 shared_weights" \
  "threads=512 threads_per_row=512 vec=8 registers cluster=16 min_blocks=2 shared_prefetch=1 shared_weights" \
  "threads=1024 threads_per_row=1024 vec=8 registers cluster=8 shared_prefetch=1 shared_weights"
pin ln-1000 "--kinds layernorm --dtypes bf16,fp16 --n 1000,1024" \
  "threads=256 threads_per_row=32 vec=8 registers min_blocks=4" \
  "threads=128 threads_per_row=32 vec=8 registers min_blocks=8" \
  "threads=256 threads_per_row=32 vec=4 registers min_blocks=4" \
  "threads=256 threads_per_row=32 vec=4 registers"
tar czf $OUT/call1.tgz -C $OUT logs && rm -rf $OUT/logs
