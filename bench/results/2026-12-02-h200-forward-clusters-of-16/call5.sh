#!/usr/bin/env bash
# Session 63, call 5 (H200). build-device: b64fd9e (= 64773a9's code). Data for the next
# session, no rule depends on it: pinned forward configs (bench --forward --graph --config at
# the shape's own M).
# 1. LayerNorm fp32 register clusters (65536-163840) with γ held, as RMSNorm's now are.
# 2. LayerNorm bf16 fp32 γ 65536 (67%): clusters of 4 copying ahead, 512 two an SM or 1024.
set -uo pipefail
B=build-device
mkdir -p $OUT/logs
pin() {  # name bench-args configs...
  local name=$1 args=$2; shift 2
  local cfg=()
  for c in "$@"; do cfg+=(--config "$c"); done
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 120 $B/normjit bench --forward --graph $args "${cfg[@]}" --json $OUT/logs/$name.json > $OUT/logs/$name.txt 2>&1
  echo "$name exit $? at $SECONDS s"; grep -E "^(rms|layer)" $OUT/logs/$name.txt | sed 's/  */ /g' | cut -d' ' -f1-2,5,7-9,10-26 | cut -c1-170
}
pin ln32 "--kinds layernorm --dtypes fp32 --n 65536,98304,131072,163840" \
  "threads=512 threads_per_row=512 vec=4 registers cluster=4 min_blocks=2 shared_weights" \
  "threads=384 threads_per_row=384 vec=4 registers cluster=8 min_blocks=2 shared_weights" \
  "threads=512 threads_per_row=512 vec=4 registers cluster=8 min_blocks=2 shared_weights" \
  "threads=640 threads_per_row=640 vec=4 registers cluster=8 shared_weights"
pin ln16 "--kinds layernorm --dtypes bf16 --weights fp32 --n 65536" \
  "threads=512 threads_per_row=512 vec=8 registers cluster=4 min_blocks=2 shared_prefetch=1 shared_weights" \
  "threads=1024 threads_per_row=1024 vec=8 registers cluster=4 shared_prefetch=1 shared_weights"
tar czf $OUT/call5.tgz -C $OUT logs && rm -rf $OUT/logs
