#!/usr/bin/env bash
# Session 25, call 4 (H100): forward register clusters of 16-bit rows in 1024-thread blocks at
# fewer slots a thread (NJ_EXP_FULL_BLOCKS: the cluster the target's 4 slots need, every block
# 1024 threads, 2-4 slots each) against the heuristic's narrower blocks (RMSNorm: 576-896
# threads, one an SM) and, for LayerNorm, rows streamed twice (call 3's rule). build-device at
# 3457cb2 plus the uncommitted change of calls 1-3 and the hook.
set -uo pipefail
B=build-device
mkdir -p $OUT/ab
NJ_EXP_FULL_BLOCKS=1 GPU_TEST_SHARDS=4 GPU_TEST_FILTER='Forward*' BUILD_DIR=$B OUT=$OUT scripts/gpu-run.sh gpu-tests > $OUT/gpu-run.txt 2>&1
echo "forward GPU tests with NJ_EXP_FULL_BLOCKS: exit $?"; grep -E "^shard|FAILED" $OUT/gpu-run.txt | head -20
F="--forward --graph --dtypes bf16 --weights fp32 --n 36864,40960,49152,57344,81920,98304,163840,196608"
scripts/bench-ab.sh $B/normjit $B/v/full $OUT/ab fwd "$F" > $OUT/ab.txt 2>&1
cat $OUT/ab.txt
tar -C $OUT -czf $OUT/logs.tgz ab gpu-tests.txt && rm -rf $OUT/ab $OUT/gpu-tests.txt
