#!/usr/bin/env bash
# Session 55, call 3 (H200). build-device = the session's code after call 2 (γ's unrecoverable
# columns read at their use again). v/old = 54065db's normjit (call 1's).
# 1. The whole GPU suite (16 shards).
# 2. A/B of the backward's fused options at odd N (bench --graph, bf16 fp32 γ and fp32, two rounds).
# Outputs in one archive (the device tool brings back a few files only).
set -uo pipefail
B=build-device
GPU_TEST_SHARDS=16 BUILD_DIR=$B OUT=$OUT timeout 400 scripts/gpu-run.sh gpu-tests > $OUT/tests-run.txt 2>&1
echo "tests exit $? at $SECONDS s"; tail -3 $OUT/tests-run.txt
grep -hE '^\[  (PASSED|FAILED|SKIPPED) ' $OUT/gpu-tests*.txt | sort | uniq -c | head; grep -h -B2 -A8 'Failure' $OUT/gpu-tests*.txt | head -40
mkdir -p $OUT/ab
timeout 170 scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab \
  bwd "--graph --dtypes bf16,fp32 --weights fp32 --n 1001,2050,4095,5003,12289 --fused none,residual,all,recompute" > $OUT/ab.txt 2>&1
echo "ab exit $? at $SECONDS s"
for r in 1 2; do python3 bench/compare_bench.py $OUT/ab/bwd-old$r.json $OUT/ab/bwd-new$r.json 2>&1 | tail -1; done
mkdir -p $OUT/logs && mv $OUT/gpu-tests*.txt $OUT/tests-run.txt $OUT/ab $OUT/logs/ 2>/dev/null
tar czf $OUT/call3.tgz -C $OUT logs && rm -rf $OUT/logs
