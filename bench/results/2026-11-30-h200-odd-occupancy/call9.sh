#!/usr/bin/env bash
# Session 54, call 9 (H200). The forward regression of call 8, bisected over session ends:
# v/<commit> = that commit's normjit (dae4f23 session 45, fbfa77e 46, 54c5259 47, 76d3884 48,
# d631c57 50, 8702b10 52), build-device/normjit the session's tree. bench --forward --graph, bf16
# fp32 γ, LN 5120 and 7168, RMS 7168 and 12288 (the regressed shapes) and 8192 (not), twice.
set -uo pipefail
B=build-device
scripts/gpu-environment.sh $B > $OUT/environment.txt 2>&1
for r in 1 2; do
  for bin in $B/v/dae4f23 $B/v/fbfa77e $B/v/54c5259 $B/v/76d3884 $B/v/d631c57 $B/v/8702b10 $B/normjit; do
    NORMJIT_CACHE_DIR=$(mktemp -d) timeout 40 $bin bench --forward --graph --dtypes bf16 --weights fp32 --n 5120,7168,8192,12288 \
      > $OUT/fwd-$(basename $bin)-$r.txt 2>&1
    echo "$r $(basename $bin): $(grep -E '^(layer|rms)' $OUT/fwd-$(basename $bin)-$r.txt | awk '{printf "%s%s %s | ", substr($1,1,1), $5, $7}')"
  done
done
echo "done at $SECONDS s"
tar czf $OUT/call9-logs.tgz -C $OUT $(cd $OUT && ls fwd-*.txt) && rm -f $OUT/fwd-*.txt
