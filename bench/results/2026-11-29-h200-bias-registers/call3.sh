#!/usr/bin/env bash
# Session 43, call 3 (H200): build-device = the commit of this script (the session's kernels and
# rules as final). The Python package's tests (four processes at once: python/tests/run.py
# --shards 4), the whole GPU suite, then tuning of LayerNorm's phased forward at 12289, 16385 and
# 20001 (bf16, fp32 γ, M = 8192 / 4096 / 4096): leads for the rule past 10233.
set -uo pipefail
B=build-device
export NORMJIT_LIBRARY=$PWD/$B/libnormjit.so
NORMJIT_CACHE_DIR=$(mktemp -d) timeout 200 python3 python/tests/run.py --shards 4 > $OUT/python-tests.txt 2>&1
echo "python tests exit $? at $SECONDS s"; grep -E "^python:|^===== shard" $OUT/python-tests.txt; grep -E "^(ERROR|FAIL):" $OUT/python-tests.txt | head
GPU_TEST_SHARDS=16 BUILD_DIR=$B OUT=$OUT timeout 300 scripts/gpu-run.sh gpu-tests > $OUT/gpu-run.txt 2>&1
echo "gpu tests exit $? at $SECONDS s"
grep -hE "^\[  (PASSED|FAILED) " $OUT/gpu-tests.txt | sort | uniq -c; grep -E "^\[  FAILED  \]|Failure" $OUT/gpu-tests.txt | head
grep -hE "^\[  PASSED  \] [0-9]+ test" $OUT/gpu-tests.txt | awk '{s+=$4} END {print "passed in all:", s}'
grep -hE "SKIPPED|skipped" $OUT/gpu-tests.txt | head -5
export NORMJIT_CACHE_DIR=$(mktemp -d)
for nm in 12289:8192 16385:4096 20001:4096; do
  timeout 40 $B/normjit tune --forward --kind layernorm --n ${nm%:*} --dtype bf16 --weight-dtype fp32 --align 2 --m ${nm#*:} > $OUT/tune-fwd-${nm%:*}.txt 2>&1
  echo "tune ${nm%:*} exit $? at $SECONDS s"; grep -A2 "^shape" $OUT/tune-fwd-${nm%:*}.txt | cut -c1-250
done
tar czf $OUT/call3-logs.tgz -C $OUT python-tests.txt gpu-run.txt gpu-tests.txt environment.txt $(cd $OUT && ls tune-fwd-*.txt) 2>/dev/null
rm -f $OUT/gpu-run.txt $OUT/gpu-tests.txt $OUT/tune-fwd-*.txt
