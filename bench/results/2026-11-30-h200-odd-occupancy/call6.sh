#!/usr/bin/env bash
# Session 54, call 6 (H200). build-device at the session's rules (V, X, and W as amended after
# call 5: 1024-thread blocks only, clusters or one block). v/old = ee73885's normjit.
# 1. The whole GPU suite (16 shards). 2. A/B, bench --forward --graph, two rounds: the amended W
#    at 32000-32768 (one block, new), 40960 and 98304 (RMSNorm's clusters of 640-768: back to
#    the rules before), 262144.
set -uo pipefail
B=build-device
scripts/gpu-environment.sh $B > $OUT/environment.txt 2>&1
GPU_TEST_SHARDS=16 BUILD_DIR=$B OUT=$OUT timeout 500 scripts/gpu-run.sh gpu-tests > $OUT/tests-run.txt 2>&1
echo "tests exit $? at $SECONDS s"; tail -5 $OUT/tests-run.txt
grep -hE '^\[  (PASSED|FAILED|SKIPPED) ' $OUT/gpu-tests*.txt | sort | uniq -c | head; grep -h -B2 -A8 'Failure' $OUT/gpu-tests*.txt | head -40
mkdir -p $OUT/ab
timeout 85 scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab \
  fwd "--forward --graph --dtypes bf16,fp16 --weights fp32,same --n 32000,32768,40960,98304,262144" > $OUT/ab.txt 2>&1
echo "ab exit $? at $SECONDS s"
grep -E "^(layer|rms)|median" $OUT/ab.txt | sed -E 's/threads_per_row=[0-9]+ //; s/registers //; s/shared_weights //' | cut -c1-140
gzip -f $OUT/gpu-tests*.txt 2>/dev/null; tar czf $OUT/call6-logs.tgz -C $OUT ab 2>/dev/null; rm -rf $OUT/ab
