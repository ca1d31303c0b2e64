#!/usr/bin/env bash
# Session 56, call 2 (H200). build-device: rows held as fp32 mark x̂ NaN where unrecoverable in
# pass 1 (mark_unrecoverable_slot), so the recompute's dx pass no longer reads γ behind each
# slot's dx store. v/old = 46e7ee6 (call 1's).
# 1. Nsight Compute of LN bf16 4095 recompute, old and new (the heuristic's 256-thread rows).
# 2. Configs beside the heuristic on the new code (LN/RMS recompute 4095).
# 3. A/B old against new, recompute at odd and aligned N, two rounds.
set -uo pipefail
B=build-device
P="--dtype bf16 --weight-dtype fp32 --n 4095 --align 2 --m 16388"
for s in "old $B/v/old" "new $B/normjit"; do
  set -- $s
  timeout 100 scripts/ncu-profile.sh $OUT/ncu ln-recompute-$1 -- $2 tune --kind layernorm $P --recompute-from-output
  echo "ncu $1 done at $SECONDS s"
done
for kind in layernorm rmsnorm; do
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 60 $B/normjit tune --kind $kind $P --recompute-from-output \
    --config "threads=256 threads_per_row=256 vec=1 registers min_blocks=2" \
    --config "threads=256 threads_per_row=256 vec=1 registers prefetch min_blocks=2" \
    --config "threads=512 threads_per_row=512 vec=1 registers min_blocks=2" \
    --config "threads=512 threads_per_row=512 vec=1 registers prefetch min_blocks=2" >> $OUT/configs.txt 2>&1
  echo "configs $kind exit $? at $SECONDS s"
done
cat $OUT/configs.txt | grep -v "^$" | tail -30
mkdir -p $OUT/ab
timeout 330 scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab \
  bf16 "--graph --dtypes bf16 --weights fp32 --n 1001,2050,4095,5003,8192,12289 --fused none,recompute" \
  fp32 "--graph --dtypes fp32 --n 1001,4095,8192,12289,65536 --fused none,recompute" > $OUT/ab.txt 2>&1
echo "ab exit $? at $SECONDS s"
cat $OUT/ab.txt | cut -c1-160
tar czf $OUT/call2.tgz -C $OUT ncu ab configs.txt && rm -rf $OUT/ncu $OUT/ab
