#!/usr/bin/env bash
# Session 37, call 8 (H200), build-device = the commit of this script. scripts/tune-compare.sh
# with its new per-N alignment (first GPU run of it), on entry 50's next 2: fp32 rows of slots
# of two (N ≡ 2 mod 4, 8-byte aligned) around the shapes where call 2's tuning beat the
# heuristic (6002 prefetching, LN 24002, LN/RMS 40002), to see whether neighbours agree.
set -uo pipefail
BUILD_DIR=build-device timeout 300 scripts/tune-compare.sh $OUT/tc --until 200 \
  layernorm:fp32:5002 rmsnorm:fp32:5002 layernorm:fp32:7002 rmsnorm:fp32:7002 \
  layernorm:fp32:20002 layernorm:fp32:28002 layernorm:fp32:36002 rmsnorm:fp32:36002 \
  layernorm:fp32:44002 rmsnorm:fp32:44002
echo "tune-compare exit $? at $SECONDS s"
grep -E '^(layernorm|rmsnorm)' $OUT/tc/tune.txt | sed -E 's/ dy=fp32 dx=fp32 weight=fp32 \+weight( \+bias)?//' | cut -c1-300
tar czf $OUT/logs.tgz -C $OUT tc && rm -rf $OUT/tc
