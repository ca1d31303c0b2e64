#!/usr/bin/env bash
# Session 25, call 5 (H100), 3d26314 (the session's code): every GPU test; the backward and
# forward sweeps (bench --graph, as eccefbb-final's); and an A/B against 3457cb2's normjit
# (build-device/v/old-normjit, built from a worktree) on the forward kernels whose code the
# rank bound changed but calls 2-3 did not time: RMSNorm bf16 clusters of 576-896-thread
# blocks, fused forward clusters with a residual or parallel norms.
set -uo pipefail
B=build-device
mkdir -p $OUT/ab
GPU_TEST_SHARDS=12 BUILD_DIR=$B OUT=$OUT scripts/gpu-run.sh gpu-tests > $OUT/gpu-run.txt 2>&1
echo "GPU tests: exit $?"; grep -E "^shard|FAILED" $OUT/gpu-run.txt | head -30
export NORMJIT_CACHE_DIR=$(mktemp -d)
$B/normjit bench --graph --json $OUT/bench.json > $OUT/bench.txt 2>&1; echo "bench: exit $?"
$B/normjit bench --forward --graph --json $OUT/bench-forward.json > $OUT/bench-forward.txt 2>&1; echo "bench forward: exit $?"
F1="--forward --graph --kinds rmsnorm --dtypes bf16 --weights fp32 --n 36864,98304,163840"
F2="--forward --graph --dtypes bf16 --weights fp32 --n 65536,98304,131072 --fused residual,parallel"
scripts/bench-ab.sh $B/v/old-normjit $B/normjit $OUT/ab fwd-rms "$F1" fwd-fused "$F2" > $OUT/ab.txt 2>&1
cat $OUT/ab.txt
tar -C $OUT -czf $OUT/logs.tgz ab gpu-tests.txt && rm -rf $OUT/ab $OUT/gpu-tests.txt
