#!/usr/bin/env bash
# Session 65, call 5 (H200). build-device: 78c954c. Data only: LayerNorm's forward with a
# pre-norm sum (the residual; `all`: residual, zero-centred γ, row scale, dropout bits) on
# 16-bit rows of 10240-16384 takes one block of N/32 threads, four 16-byte slots a thread,
# bound to 2-3 blocks an SM, and ptxas spills 16-84 bytes there (NVRTC's report); the standing
# has the residual at 16384 at 75% of copy against 94% without it. Pinned at M·N = 64 Mi:
#   A: the same block, clusters of 2 (two slots a thread; no spill),
#   B: clusters of 8 of N/128 threads in whole warps, 64 registers (pre_norm_sum_clusters'
#      shape, which takes 20480 up),
#   C: blocks of N/16 threads, one an SM, unbounded (two slots a thread).
set -uo pipefail
L=$OUT/logs
mkdir -p $L
for nh in 10240:3 12288:2 14336:2 16384:2; do
  n=${nh%:*} h=${nh#*:} t=$((${nh%:*} / 32))
  b=$(((n / 128 + 31) / 32 * 32))
  bb=$((65536 / (b * 64)))
  PIN_TIMEOUT=90 scripts/bench-pin.sh $L ln$n "--forward --kinds layernorm --dtypes bf16,fp16 --n $n --fused residual,all" \
    "threads=$t threads_per_row=$t vec=8 registers cluster=2 min_blocks=$h" \
    "threads=$b threads_per_row=$b vec=8 registers cluster=8 min_blocks=$bb" \
    "threads=$((2 * t)) threads_per_row=$((2 * t)) vec=8 registers" > $L/ln$n-rows.txt
  head -1 $L/ln$n-rows.txt
done
tar czf $OUT/call5.tgz -C $OUT logs && rm -rf $L
