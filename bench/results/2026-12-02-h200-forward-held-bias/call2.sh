#!/usr/bin/env bash
# Session 64, call 2 (H200; call 1 was the whole GPU suite and the standing at 48a1939, in
# ../2026-12-02-h200-forward-held-bias/call1). build-device: 48a1939. v/old: ad573d8 (before
# the fp16 widening). No rule changed; data for three questions:
# 1. LayerNorm's forward 16-bit rows with fp32 γ (62-67% of copy at 65536-262144, 16-bit γ
#    71-79%): its clusters hold γ and read β every row. Clusters twice as wide hold both.
# 2. fp32 rows of 229376-262144 at 32-96 rows (streamed clusters of 2 now): clusters of 8 of
#    896-1024 threads with γ held, at each width (entry 77's next 1).
# 3. The standing's LayerNorm fp16 512 at 0.96-0.97x: A/B against ad573d8, two rounds.
set -uo pipefail
B=build-device
L=$OUT/logs
mkdir -p $L/ab
scripts/bench-pin.sh $L ln16 "--forward --kinds layernorm --dtypes bf16,fp16 --weights fp32 --n 65536,131072,262144" \
  "threads=1024 threads_per_row=1024 vec=8 registers cluster=4 shared_prefetch=1 shared_weights" \
  "threads=1024 threads_per_row=1024 vec=8 registers cluster=4 shared_weights" \
  "threads=1024 threads_per_row=1024 vec=8 registers cluster=8 shared_prefetch=1 shared_weights" \
  "threads=1024 threads_per_row=1024 vec=8 registers cluster=8 shared_weights"
scripts/bench-pin.sh $L fp32 "--forward --dtypes fp32 --n 229376,233472,237568,245760,253952,262144 --m 32,48,64,96" \
  "threads=896 threads_per_row=896 vec=4 registers cluster=8 shared_weights" \
  "threads=912 threads_per_row=912 vec=4 registers cluster=8 shared_weights" \
  "threads=928 threads_per_row=928 vec=4 registers cluster=8 shared_weights" \
  "threads=960 threads_per_row=960 vec=4 registers cluster=8 shared_weights" \
  "threads=992 threads_per_row=992 vec=4 registers cluster=8 shared_weights" \
  "threads=1024 threads_per_row=1024 vec=4 registers cluster=8 shared_weights"
timeout 150 scripts/bench-ab.sh $B/v/old $B/normjit $L/ab fwd "--forward --graph --kinds layernorm,rmsnorm --dtypes fp16,bf16 --n 512,1000" \
  > $L/ab/ab.txt 2>&1
echo "ab at ${SECONDS}s"; grep -E "^(layernorm|rmsnorm)|median" $L/ab/ab.txt | cut -c1-120
tar czf $OUT/call2.tgz -C $OUT logs && rm -rf $L
