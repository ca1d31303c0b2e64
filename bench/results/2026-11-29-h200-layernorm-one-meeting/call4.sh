#!/usr/bin/env bash
# Session 42, call 4 (H200): build-device = the commit of this script (the session's last kernel
# change). The whole GPU suite, then the forward's odd 16-bit rows where they stand now (bench
# --forward --graph, M·N = 64 Mi, both kinds, bf16 and fp16, fp32 γ and γ in x's dtype).
set -uo pipefail
B=build-device
GPU_TEST_SHARDS=16 BUILD_DIR=$B OUT=$OUT timeout 420 scripts/gpu-run.sh gpu-tests > $OUT/gpu-run.txt 2>&1
echo "gpu tests exit $? at $SECONDS s"
grep -hE "^\[  (PASSED|FAILED) " $OUT/gpu-tests.txt | sort | uniq -c; grep -E "^\[  FAILED  \]|Failure" $OUT/gpu-tests.txt | head
grep -hE "^\[  PASSED  \] [0-9]+ test" $OUT/gpu-tests.txt | awk '{s+=$4} END {print "passed in all:", s}'
grep -hE "SKIPPED|skipped" $OUT/gpu-tests.txt | head -5
tar czf $OUT/test-logs.tgz -C $OUT gpu-run.txt gpu-tests.txt environment.txt 2>/dev/null; rm -f $OUT/gpu-run.txt $OUT/gpu-tests.txt
NORMJIT_CACHE_DIR=$(mktemp -d) timeout 150 $B/normjit bench --forward --graph --kinds layernorm,rmsnorm --dtypes bf16,fp16 --weights fp32,same \
  --n 1001,2001,3001,4095,5003,6001,8191,10001,12289,16385,20001,30001 --json $OUT/forward-odd.json > $OUT/forward-odd.txt 2>&1
echo "bench exit $? at $SECONDS s"; cut -c1-140 $OUT/forward-odd.txt | head -70
