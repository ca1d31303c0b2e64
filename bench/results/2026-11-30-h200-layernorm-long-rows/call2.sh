#!/usr/bin/env bash
# Session 48, call 2 (H200). build-device as call 1.
# 1. Call 1: LayerNorm's main kernel takes 130 us at 32768 (RMSNorm 115) and 134 at 65536 (117)
#    with the same DRAM bytes and the same config; the reduction is 6 us against 4. Where do
#    LayerNorm's warps wait? ncu --set full (stall sampling) of both at 32768 (M = 2048) and
#    of LayerNorm at 16384 (M = 4096).
# 2. racecheck over the two paired-rows tests call 1's racecheck did not reach.
set -uo pipefail
B=build-device
mkdir -p $OUT/ncu
for k in layernorm rmsnorm; do
  scripts/ncu-profile.sh $OUT/ncu $k-32768 -- $B/normjit tune --kind $k --dtype bf16 --weight-dtype fp32 --n 32768 --m 2048
  echo "== $k 32768 at $SECONDS s"; head -30 $OUT/ncu/$k-32768-stalls.txt | cut -c1-200
done
scripts/ncu-profile.sh $OUT/ncu layernorm-16384 -- $B/normjit tune --kind layernorm --dtype bf16 --weight-dtype fp32 --n 16384 --m 4096
echo "== layernorm 16384 at $SECONDS s"; head -12 $OUT/ncu/layernorm-16384-stalls.txt | cut -c1-200
SANITIZE_TOOLS="racecheck" SANITIZE_WARMUP=0 SANITIZE_FILTER_racecheck='*BackwardPairedRows.*N65536:*BackwardPairedRows.*N2050' \
  TIMEOUT_racecheck=300 BUILD_DIR=$B OUT=$OUT scripts/gpu-sanitize.sh > $OUT/sanitize-run.txt 2>&1
echo "sanitize exit $? at $SECONDS s"; grep -E "OK|hazard|ERROR SUMMARY" $OUT/sanitize.txt | head; tail -3 $OUT/sanitize.txt
tar czf $OUT/call2-logs.tgz -C $OUT ncu sanitize.txt sanitize-run.txt; rm -f $OUT/ncu/*-sass.csv
