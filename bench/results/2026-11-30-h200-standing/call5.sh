#!/usr/bin/env bash
# Session 55, call 5 (H200), the last of the device time. build-device = the bytes of a bit mask
# from ballots; v/old = call 3/4's normjit (the bytes gathered by shuffles).
# 1. ForwardFused.* (4 shards). 2. A/B bench --forward --graph --fused all at odd N, bf16 fp32 γ.
set -uo pipefail
B=build-device
GPU_TEST_SHARDS=4 GPU_TEST_FILTER='ForwardFused.*' BUILD_DIR=$B OUT=$OUT timeout 70 scripts/gpu-run.sh gpu-tests > $OUT/tests-run.txt 2>&1
echo "tests exit $? at $SECONDS s"; grep -hE '^\[  (PASSED|FAILED) |Failure' $OUT/gpu-tests*.txt | sort | uniq -c
mkdir -p $OUT/ab
timeout 140 scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab \
  fwd "--forward --graph --dtypes bf16 --weights fp32 --n 1001,2050,4095,5003,12289 --fused all" > $OUT/ab.txt 2>&1
echo "ab exit $? at $SECONDS s"
for r in 1 2; do python3 bench/compare_bench.py $OUT/ab/fwd-old$r.json $OUT/ab/fwd-new$r.json 2>&1 | cut -c1-120; done
mkdir -p $OUT/logs && mv $OUT/gpu-tests*.txt $OUT/tests-run.txt $OUT/ab $OUT/logs/ 2>/dev/null
tar czf $OUT/call5.tgz -C $OUT logs && rm -rf $OUT/logs
