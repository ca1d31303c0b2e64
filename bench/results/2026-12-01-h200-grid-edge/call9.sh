#!/usr/bin/env bash
# Session 58, call 9 (H200). build-device: as call 8. Call 8's A/B had RMSNorm's realigned wide
# cluster at 327681 and 32 rows 0.92x the grid: where do they cross for rows aligned to 2 bytes?
# tune --config (the rule's config first, then the grid's) at 32-128 rows.
set -uo pipefail
B=build-device
for s in "327681 320 32,64,128" "262147 256 32,64,128" "393215 384 32,64,128"; do
  set -- $s
  for m in ${3//,/ }; do
    echo "### rmsnorm bf16 $1 align 2 m $m" >> $OUT/configs.txt
    NORMJIT_CACHE_DIR=$(mktemp -d) timeout 30 $B/normjit tune --kind rmsnorm --dtype bf16 --weight-dtype fp32 --n $1 --align 2 --m $m \
      --config "threads=$2 threads_per_row=$2 vec=8 registers cluster=132 grid staged stages=5" 2>/dev/null | grep -E "^ *config" >> $OUT/configs.txt
  done
done
echo "configs done at $SECONDS s"
