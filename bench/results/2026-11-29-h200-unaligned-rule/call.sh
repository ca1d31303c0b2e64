#!/usr/bin/env bash
# Session 35, call 3 (H200): predicated slot loads for 16-bit rows only (fp32 back to the branch,
# its kernels as at 8e0473a), and the memory-rich rule for 16-bit rows aligned to 2 or 4 bytes
# (8 slots a thread prefetching).
#  1. Every GPU test.
#  2. The alignment scan of call 1 again (bench --graph, each N at its own alignment).
#  3. The backward sweep with small-M latency.
set -uo pipefail
B=build-device
GPU_TEST_SHARDS=16 BUILD_DIR=$B OUT=$OUT timeout 400 scripts/gpu-run.sh gpu-tests > $OUT/gpu-run.txt 2>&1
echo "GPU tests: exit $? at $SECONDS s"; grep -hE "^\[  (PASSED|FAILED) " $OUT/gpu-tests.txt | sort | uniq -c | head; grep -E "^\[  FAILED  \]" $OUT/gpu-tests.txt | head -20
grep -c '^\[       OK \]' $OUT/gpu-tests.txt
ns=""
for b in 504 1000 1504 2000 2504 3000 3504 4000 5000 6000 7000 9000 10000 12000 14000 20000 30000 50000; do
  ns="$ns,$b,$((b+1)),$((b+2)),$((b+4))"
done
NORMJIT_CACHE_DIR=$(mktemp -d) timeout 200 $B/normjit bench --graph --kinds layernorm,rmsnorm --dtypes bf16,fp32 \
  --weights fp32 --n ${ns#,} --json $OUT/scan.json >$OUT/scan.txt 2>&1
echo "scan: exit $? at $SECONDS s"
NORMJIT_CACHE_DIR=$(mktemp -d) timeout 150 $B/normjit bench --latency --graph --json $OUT/bench.json > $OUT/bench.txt 2>&1
echo "bench: exit $? at $SECONDS s"; head -2 $OUT/bench.txt
tar -C $OUT -czf $OUT/logs.tgz gpu-tests.txt environment.txt scan.txt && rm -rf $OUT/gpu-tests.txt $OUT/environment.txt $OUT/scan.txt
