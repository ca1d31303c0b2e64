#!/usr/bin/env bash
# Session 36, call 3 (H200): build-device/normjit = the commit of this script (the memory-rich rule
# for fp32 rows of an element, rich_fp32_element_rows), build-device/v/old = 0c59bc9 (before it).
# 1) GPU tests: the rule's configs pinned against the reference, every tuner candidate at every
#    4-byte shift, the odd-row tests.
# 2) A/B, two rounds: fp32 rows of an element (odd N, contiguous, so 4-byte aligned) from 5001 to
#    65001, LN and RMS, fp32 γ, bench --graph.
set -uo pipefail
B=build-device
GPU_TEST_SHARDS=16 GPU_TEST_FILTER='Tuning.*:EveryN/*:BackwardMisalignedPointers.*' \
  BUILD_DIR=$B OUT=$OUT timeout 220 scripts/gpu-run.sh gpu-tests > $OUT/gpu-subset.txt 2>&1
echo "gpu subset exit $? at $SECONDS s"; grep -E "FAILED|PASSED" $OUT/gpu-subset.txt | sort | uniq -c | head -20
ab=$(mktemp -d)
odd=5001,5121,5503,6001,6501,7001,7501,8001,8193,9001,10001,11001,12001,13001,14001,15001,16001,16385,18001,20001,22001,24001,27001,30001,33001,36001,40001,45001,50001,55001,60001,65001
timeout 330 scripts/bench-ab.sh $B/v/old $B/normjit $ab \
  odd "--graph --kinds layernorm,rmsnorm --dtypes fp32 --weights fp32 --n $odd" > $OUT/ab.txt 2>&1
echo "ab exit $? at $SECONDS s"
cut -c1-200 $OUT/ab.txt | grep -vE "^ *$" | head -150
cp $ab/*.json $OUT/ 2>/dev/null
tar czf $OUT/logs.tgz -C $OUT $(cd $OUT && ls gpu-subset.txt gpu-tests.txt *.json 2>/dev/null) 2>/dev/null
(cd $OUT && rm -f gpu-subset.txt gpu-tests.txt *.json)
