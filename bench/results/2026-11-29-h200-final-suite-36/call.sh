#!/usr/bin/env bash
# Session 36, call 6 (H200), build-device = the commit of this script (the session's last code:
# the memory-rich rules for fp32 rows of an element and 16-bit rows of slots of two and four).
# 1) Every GPU test.
# 2) The backward sweep with small-M latency (bench --latency --graph).
# 3) The scan of session 35 (-8e0473a-align-scan/): N = b, b+1, b+2, b+4 for 18 b from 504 to
#    50000, contiguous rows (each N at its own alignment), LN and RMS, bf16 and fp32, fp32 γ.
set -uo pipefail
B=build-device
GPU_TEST_SHARDS=16 BUILD_DIR=$B OUT=$OUT timeout 330 scripts/gpu-run.sh gpu-tests > $OUT/gpu-run.txt 2>&1
echo "GPU tests: exit $? at $SECONDS s"; grep -hE "^\[  (PASSED|FAILED) " $OUT/gpu-tests.txt | sort | uniq -c | head; grep -E "^\[  FAILED  \]" $OUT/gpu-tests.txt | head -20
grep -c '^\[       OK \]' $OUT/gpu-tests.txt
NORMJIT_CACHE_DIR=$(mktemp -d) timeout 120 $B/normjit bench --latency --graph --json $OUT/bench.json > $OUT/bench.txt 2>&1
echo "sweep: exit $? at $SECONDS s"
ns=""
for b in 504 1000 1504 2000 2504 3000 3504 4000 5000 6000 7000 9000 10000 12000 14000 20000 30000 50000; do
  ns="$ns,$b,$((b+1)),$((b+2)),$((b+4))"
done
NORMJIT_CACHE_DIR=$(mktemp -d) timeout $((585 - SECONDS)) $B/normjit bench --graph --kinds layernorm,rmsnorm --dtypes bf16,fp32 \
  --weights fp32 --n ${ns#,} --json $OUT/scan.json > $OUT/scan.txt 2>&1
echo "scan: exit $? at $SECONDS s"
tar -C $OUT -czf $OUT/logs.tgz gpu-tests.txt scan.txt && rm -f $OUT/gpu-tests.txt $OUT/scan.txt
