#!/usr/bin/env bash
# Session 30, call 3 (H200), c55ebf2: every GPU test (the forward's held-weights rule and the
# backward's residual rule among them; the few-groups test now runs the residual alone); an A/B
# of the residual rule against 590ee30 (build-device/v/old), bf16 and fp16, fp32 γ; then the
# backward sweep with small-M latency and the forward sweep, as the device time left allows.
set -uo pipefail
B=build-device
GPU_TEST_SHARDS=16 BUILD_DIR=$B OUT=$OUT timeout 300 scripts/gpu-run.sh gpu-tests > $OUT/gpu-run.txt 2>&1
echo "GPU tests: exit $? at $SECONDS s"; grep -hE "^\[  (PASSED|FAILED) " $OUT/gpu-tests.txt | sort | uniq -c | head; grep -E "^\[  FAILED  \]" $OUT/gpu-tests.txt | head -20
mkdir -p $OUT/ab
timeout 100 scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab \
  residual "--graph --dtypes bf16,fp16 --weights fp32 --n 2048,4096,7168,12288 --fused residual" > $OUT/ab.txt 2>&1
echo "ab: exit $? at $SECONDS s"; grep -E "median|copy GB" $OUT/ab.txt
NORMJIT_CACHE_DIR=$(mktemp -d) timeout $((530 - SECONDS)) $B/normjit bench --latency --graph --json $OUT/bench.json > $OUT/bench.txt 2>&1
echo "bench: exit $? at $SECONDS s"; head -2 $OUT/bench.txt
[ $SECONDS -lt 480 ] && { NORMJIT_CACHE_DIR=$(mktemp -d) timeout $((555 - SECONDS)) $B/normjit bench --forward --graph --json $OUT/bench-forward.json > $OUT/bench-forward.txt 2>&1
  echo "bench forward: exit $? at $SECONDS s"; }
tar -C $OUT -czf $OUT/logs.tgz ab gpu-tests.txt environment.txt && rm -rf $OUT/ab $OUT/gpu-tests.txt $OUT/environment.txt
