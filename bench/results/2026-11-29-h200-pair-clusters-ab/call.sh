#!/usr/bin/env bash
# Session 37, call 9 (H200): build-device/normjit = the commit of this script (fp32 slots of two
# of 32769-40960 in the clusters tuned best at 36002/40002), build-device/v/old = 506a9ea.
# 1) Tuning.* GPU tests (the memory-rich configs pinned against the reference, 36002/40002 among them).
# 2) A/B, two rounds, bench --graph, fp32 N ≡ 2 mod 4 (8-byte aligned) 32770-40958, LN and RMS.
set -uo pipefail
B=build-device
GPU_TEST_SHARDS=16 GPU_TEST_FILTER='Tuning.*' \
  BUILD_DIR=$B OUT=$OUT timeout 150 scripts/gpu-run.sh gpu-tests > $OUT/gpu-subset.txt 2>&1
echo "gpu subset exit $? at $SECONDS s"; grep -E "OK \]|FAILED" $OUT/gpu-tests.txt | head -20
ab=$(mktemp -d)
timeout 150 scripts/bench-ab.sh $B/v/old $B/normjit $ab \
  pairs "--graph --kinds layernorm,rmsnorm --dtypes fp32 --weights fp32 --n 32770,34002,36002,38002,40002,40958" > $OUT/ab.txt 2>&1
echo "ab exit $? at $SECONDS s"
cut -c1-200 $OUT/ab.txt | grep -vE "^ *$" | head -60
cp $ab/*.json $OUT/ 2>/dev/null
tar czf $OUT/logs.tgz -C $OUT $(cd $OUT && ls gpu-subset.txt gpu-tests.txt *.json 2>/dev/null) 2>/dev/null
(cd $OUT && rm -f gpu-subset.txt gpu-tests.txt *.json)
