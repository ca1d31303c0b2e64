#!/usr/bin/env bash
# Session 37, call 10 (H200): build-device/normjit = the commit of this script (fp32 slots of
# two of 4097-6144 prefetching), build-device/v/old = 4d997a1 (before).
# 1) The memory-rich configs pinned against the reference (LN 5002, RMS 6142 fp32 at 8 bytes among them).
# 2) A/B, two rounds, bench --graph, fp32 N ≡ 2 mod 4 4098-6142, LN and RMS.
set -uo pipefail
B=build-device
GPU_TEST_SHARDS=4 GPU_TEST_FILTER='Tuning.MemoryRichUnalignedRowsMatchTheReference' \
  BUILD_DIR=$B OUT=$OUT timeout 60 scripts/gpu-run.sh gpu-tests > $OUT/gpu-subset.txt 2>&1
echo "gpu subset exit $? at $SECONDS s"; grep -E "OK \]|FAILED" $OUT/gpu-tests.txt | head -5
ab=$(mktemp -d)
timeout 120 scripts/bench-ab.sh $B/v/old $B/normjit $ab \
  pairs "--graph --kinds layernorm,rmsnorm --dtypes fp32 --weights fp32 --n 4098,4502,5002,5502,6002,6142" > $OUT/ab.txt 2>&1
echo "ab exit $? at $SECONDS s"
cut -c1-200 $OUT/ab.txt | grep -vE "^ *$" | head -40
tar czf $OUT/logs.tgz -C $OUT $(cd $OUT && ls gpu-subset.txt gpu-tests.txt 2>/dev/null) 2>/dev/null
(cd $OUT && rm -f gpu-subset.txt gpu-tests.txt)
