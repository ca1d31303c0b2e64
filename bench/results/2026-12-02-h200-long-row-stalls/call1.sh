#!/usr/bin/env bash
# Session 66, call 1 (H200). build-device: 12c8c8d. Data only: where the backward's long 16-bit
# rows spend their time (issue 3: LN bf16 262144 at 58% of copy, 131072 70%, 1M 43%; RMSNorm
# 262144 69%). Nsight Compute (--set full, stall sampling) of the heuristic's main kernel,
# bf16 with fp32 γ, M·N = 64 Mi, then a few configs pinned beside the heuristic.
set -uo pipefail
B=build-device
L=$OUT/logs
mkdir -p $L/ncu
for kn in layernorm:262144 rmsnorm:262144 layernorm:131072 layernorm:1048576; do
  k=${kn%:*} n=${kn#*:}
  scripts/ncu-profile.sh $L/ncu $k$n -- $B/normjit bench --kinds $k --dtypes bf16 --weights fp32 --n $n --reps 1
  echo "ncu $k $n at ${SECONDS}s"
done
# LN 131072: one 1024-thread block an SM in a cluster of 8 (against two of 512 in clusters of 16).
# LN 262144: 512 threads of 32 elements (four slots) in clusters of 16, one an SM.
PIN_TIMEOUT=90 scripts/bench-pin.sh $L pin-ln "--kinds layernorm --dtypes bf16 --weights fp32,same --n 131072,262144" \
  "threads=1024 threads_per_row=1024 vec=8 registers cluster=8 shared_sums shared_weights" \
  "threads=512 threads_per_row=512 vec=8 registers cluster=16 shared_sums shared_weights"
tar czf $OUT/call1.tgz -C $OUT logs && rm -rf $L
