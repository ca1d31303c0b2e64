#!/usr/bin/env bash
# Session 41, call 3 (H200): build-device = the commit of this script. Call 2: with the masks
# deferred, prefetching phased forward blocks won tuning at RMS 5003 (90.9 against the rule's
# 108.5 µs) and 12289 (152.6 against 168.8), but the deferral cost the blocks that do not prefetch
# 1-11%, so only prefetching blocks defer now (the others' PTX is as at 53e0333). To fit a rule:
# each odd N's rule config (`tune --config` times the heuristic's first) against prefetching
# phased blocks of 2 and 4 slots a thread, with and without min_blocks, RMS and LN, bf16 fp32 γ,
# M = 16384.
set -uo pipefail
B=build-device
export NORMJIT_CACHE_DIR=$(mktemp -d)
for kind in rmsnorm layernorm; do
  for n in 1001 1537 2001 3001 4095 5003 6001 8191 10001 12289 16385; do
    slots=$(( (n + 7 + 7) / 8 )); args=()
    for s in 2 4; do
      t=$(( ( (slots + s - 1) / s + 31) / 32 * 32 )); [ $t -lt 64 ] && t=64; [ $t -gt 1024 ] && continue
      mb=$(( 1024 / t )); [ $mb -gt 16 ] && mb=16
      args+=(--config "threads=$t threads_per_row=$t vec=8 registers prefetch shared_weights phased")
      [ $mb -gt 1 ] && args+=(--config "threads=$t threads_per_row=$t vec=8 registers prefetch min_blocks=$mb shared_weights phased")
    done
    [ $SECONDS -lt 500 ] && timeout 40 $B/normjit tune --forward --kind $kind --n $n --dtype bf16 --weight-dtype fp32 --align 2 --m 16384 "${args[@]}" 2>&1
  done
done > $OUT/tune-log.txt
echo "tune at $SECONDS s"
grep -E " time [0-9]+/" $OUT/tune-log.txt | sed -E 's/^.*\] (layernorm|rmsnorm) forward N=([0-9]+).* time ([0-9]+)\/[0-9]+ /\1 \2 #\3 /; s/threads_per_row=[0-9]+ //' | cut -c1-120
grep -iE "error|fail" $OUT/tune-log.txt | head
