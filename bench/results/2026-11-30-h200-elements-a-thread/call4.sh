#!/usr/bin/env bash
# Session 49, call 4 (H200). build-device as call 3 (the gate's two changes).
# 1. The speed sweep (--latency --graph --json), alone on the GPU.
# 2. For the next rule: the gate after the norm, fp32 γ, its clusters of two 1024-thread blocks
#    with γ in shared memory (call 3: 1.04x at 16384) at 12288-16384, bf16 and fp16.
# 3. The whole GPU suite (16 shards) beside the Python tests (four processes).
set -uo pipefail
B=build-device
NORMJIT_CACHE_DIR=$(mktemp -d) $B/normjit bench --latency --graph --json $OUT/bench.json > $OUT/bench.txt 2>&1
echo "bench exit $? at $SECONDS s"; cut -c1-150 $OUT/bench.txt | head -5
c="threads=1024 threads_per_row=1024 vec=8 registers cluster=2 shared_sums"
for d in bf16 fp16; do for n in 12288 14336 16384; do
  NORMJIT_CACHE_DIR=$(mktemp -d) $B/normjit tune --kind rmsnorm --n $n --dtype $d --weight-dtype fp32 --m $((67108864 / n)) \
    --gate after-norm --config "$c" --config "$c shared_weights"
done; done > $OUT/tune-gate-sw.txt 2> $OUT/tune-gate-sw.err
echo "tune exit $? at $SECONDS s"; grep -E "^  config" $OUT/tune-gate-sw.txt | sed -E 's/ x=.*M<=[0-9]+ \| /: /' | cut -c1-160
NORMJIT_LIBRARY=$PWD/$B/libnormjit.so timeout $((560 - SECONDS)) python3 python/tests/run.py --shards 4 > $OUT/python-tests.txt 2>&1 &
py=$!
GPU_TEST_SHARDS=16 BUILD_DIR=$B OUT=$OUT timeout $((570 - SECONDS)) scripts/gpu-run.sh gpu-tests > $OUT/tests-run.txt 2>&1
echo "tests exit $? at $SECONDS s"; grep -E '^\[  (PASSED|FAILED|SKIPPED) |Failure' $OUT/gpu-tests.txt | sort | uniq -c | head -30
grep -A8 Failure $OUT/gpu-tests.txt | head -40; grep -E "^shard" $OUT/tests-run.txt | cut -c1-200
wait $py; echo "python exit $? at $SECONDS s"; tail -6 $OUT/python-tests.txt
tar czf $OUT/call4-logs.tgz -C $OUT gpu-tests.txt tests-run.txt tune-gate-sw.err 2>/dev/null; gzip -k $OUT/gpu-tests.txt
