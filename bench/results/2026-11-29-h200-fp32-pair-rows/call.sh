#!/usr/bin/env bash
# Session 36, call 7 (H200), on the last of the session's device time: build-device/normjit = the
# commit of this script (fp32 rows of slots of two past 8192 take the element-row rule's
# shapes), build-device/v/old = ef42738 (before it).
# 1) GPU test: the memory-rich rules pinned against the reference (with two 8-byte aligned fp32
#    shapes).
# 2) A/B, two rounds: fp32 rows, N ≡ 2 mod 4 (8-byte aligned), 8194-60002, LN and RMS.
set -uo pipefail
B=build-device
GPU_TEST_SHARDS=4 GPU_TEST_FILTER='Tuning.MemoryRich*' \
  BUILD_DIR=$B OUT=$OUT timeout 60 scripts/gpu-run.sh gpu-tests > $OUT/gpu-subset.txt 2>&1
echo "gpu test exit $? at $SECONDS s"; grep -E "OK \]|FAILED" $OUT/gpu-tests.txt | head
ab=$(mktemp -d)
ns=8194,9002,10002,12002,14002,16002,16386,20002,24002,30002,36002,40002,50002,60002
timeout 130 scripts/bench-ab.sh $B/v/old $B/normjit $ab \
  pairs "--graph --kinds layernorm,rmsnorm --dtypes fp32 --weights fp32 --n $ns" > $OUT/ab.txt 2>&1
echo "ab exit $? at $SECONDS s"
cut -c1-200 $OUT/ab.txt | grep -vE "^ *$" | head -70
cp $ab/*.json $OUT/ 2>/dev/null
tar czf $OUT/logs.tgz -C $OUT $(cd $OUT && ls gpu-subset.txt gpu-tests.txt *.json 2>/dev/null) 2>/dev/null
(cd $OUT && rm -f gpu-subset.txt gpu-tests.txt *.json)
