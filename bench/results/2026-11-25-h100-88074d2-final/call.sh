#!/usr/bin/env bash
# Session 26, call 3 (H100), 88074d2 (the session's code: the backward's clusters meet by
# posting, the receiver's arrival relaxed; parallel norms' register clusters keep the barrier):
# every GPU test; the backward sweep (bench --graph, as 3d26314-final's; the forward's kernels
# are as at a809c94, PTX identical); an A/B against a809c94's normjit (build-device/v/old) on
# fused cluster shapes.
set -uo pipefail
B=build-device
mkdir -p $OUT/ab
GPU_TEST_SHARDS=12 BUILD_DIR=$B OUT=$OUT timeout 400 scripts/gpu-run.sh gpu-tests > $OUT/gpu-run.txt 2>&1
echo "GPU tests: exit $?"; grep -E "^shard|FAILED" $OUT/gpu-run.txt | head -30
export NORMJIT_CACHE_DIR=$(mktemp -d)
timeout 150 $B/normjit bench --graph --json $OUT/bench.json > $OUT/bench.txt 2>&1; echo "bench: exit $?"
FUSED="--graph --dtypes bf16 --weights fp32 --n 65536,262144 --fused residual,parallel"
scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab fused "$FUSED" > $OUT/ab.txt 2>&1
cat $OUT/ab.txt
tar -C $OUT -czf $OUT/logs.tgz ab gpu-tests.txt && rm -rf $OUT/ab $OUT/gpu-tests.txt
