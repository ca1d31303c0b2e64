#!/usr/bin/env bash
# Session 66, call 2 (H200). build-device: 14ad71e + uncommitted `shared_prefetch_dy_only`
# (LayerNorm's packed 16-bit rows copy dy alone one row ahead into shared memory, x loaded at
# the row's top: half a stage fits beside two column sums and γ where a whole one does not).
# 1. Pinned: every dy-only candidate the search space lists for LN bf16 (fp32 γ) at
#    16384-262144, beside the heuristic, bf16 fp32 γ and fp16 fp16 γ, M·N = 64 Mi.
# 2. BackwardSharedPrefetch (every candidate copying ahead, LN 131072 and 262144 added).
set -uo pipefail
B=build-device
L=$OUT/logs
mkdir -p $L
PIN_TIMEOUT=100 scripts/bench-pin.sh $L dy16384 "--kinds layernorm --dtypes bf16,fp16 --weights fp32,same --n 16384" \
  "threads=1024 threads_per_row=1024 vec=8 registers shared_prefetch=1 shared_prefetch_dy_only shared_sums" \
  "threads=1024 threads_per_row=1024 vec=8 registers shared_prefetch=1 shared_prefetch_dy_only shared_sums shared_weights" \
  "threads=512 threads_per_row=512 vec=8 registers cluster=2 shared_prefetch=1 shared_prefetch_dy_only min_blocks=2 shared_sums shared_weights" \
  "threads=512 threads_per_row=512 vec=8 registers cluster=2 shared_prefetch=1 shared_prefetch_dy_only shared_sums shared_weights" \
  "threads=1024 threads_per_row=1024 vec=8 registers cluster=2 shared_prefetch=1 shared_prefetch_dy_only shared_sums shared_weights" \
  "threads=512 threads_per_row=512 vec=8 registers cluster=4 shared_prefetch=1 shared_prefetch_dy_only min_blocks=2 shared_sums shared_weights" \
  "threads=512 threads_per_row=512 vec=8 registers cluster=4 shared_prefetch=1 shared_prefetch_dy_only shared_sums shared_weights"
PIN_TIMEOUT=100 scripts/bench-pin.sh $L dy32768 "--kinds layernorm --dtypes bf16,fp16 --weights fp32,same --n 32768" \
  "threads=1024 threads_per_row=1024 vec=8 registers cluster=2 shared_prefetch=1 shared_prefetch_dy_only shared_sums shared_weights" \
  "threads=512 threads_per_row=512 vec=8 registers cluster=4 shared_prefetch=1 shared_prefetch_dy_only min_blocks=2 shared_sums shared_weights" \
  "threads=512 threads_per_row=512 vec=8 registers cluster=4 shared_prefetch=1 shared_prefetch_dy_only shared_sums shared_weights" \
  "threads=1024 threads_per_row=1024 vec=8 registers cluster=4 shared_prefetch=1 shared_prefetch_dy_only shared_sums shared_weights" \
  "threads=512 threads_per_row=512 vec=8 registers cluster=8 shared_prefetch=1 shared_prefetch_dy_only min_blocks=2 shared_sums shared_weights" \
  "threads=512 threads_per_row=512 vec=8 registers cluster=8 shared_prefetch=1 shared_prefetch_dy_only shared_sums shared_weights"
PIN_TIMEOUT=100 scripts/bench-pin.sh $L dy65536 "--kinds layernorm --dtypes bf16,fp16 --weights fp32,same --n 65536" \
  "threads=1024 threads_per_row=1024 vec=8 registers cluster=4 shared_prefetch=1 shared_prefetch_dy_only shared_sums shared_weights" \
  "threads=512 threads_per_row=512 vec=8 registers cluster=8 shared_prefetch=1 shared_prefetch_dy_only min_blocks=2 shared_sums shared_weights" \
  "threads=512 threads_per_row=512 vec=8 registers cluster=8 shared_prefetch=1 shared_prefetch_dy_only shared_sums shared_weights" \
  "threads=1024 threads_per_row=1024 vec=8 registers cluster=8 shared_prefetch=1 shared_prefetch_dy_only shared_sums shared_weights" \
  "threads=512 threads_per_row=512 vec=8 registers cluster=16 shared_prefetch=1 shared_prefetch_dy_only min_blocks=2 shared_sums shared_weights" \
  "threads=512 threads_per_row=512 vec=8 registers cluster=16 shared_prefetch=1 shared_prefetch_dy_only shared_sums shared_weights"
PIN_TIMEOUT=100 scripts/bench-pin.sh $L dy131072 "--kinds layernorm --dtypes bf16,fp16 --weights fp32,same --n 131072" \
  "threads=1024 threads_per_row=1024 vec=8 registers cluster=8 shared_prefetch=1 shared_prefetch_dy_only shared_sums shared_weights" \
  "threads=512 threads_per_row=512 vec=8 registers cluster=16 shared_prefetch=1 shared_prefetch_dy_only min_blocks=2 shared_sums shared_weights" \
  "threads=512 threads_per_row=512 vec=8 registers cluster=16 shared_prefetch=1 shared_prefetch_dy_only shared_sums shared_weights" \
  "threads=1024 threads_per_row=1024 vec=8 registers cluster=16 shared_prefetch=1 shared_prefetch_dy_only shared_sums shared_weights"
PIN_TIMEOUT=100 scripts/bench-pin.sh $L dy262144 "--kinds layernorm --dtypes bf16,fp16 --weights fp32,same --n 262144" \
  "threads=1024 threads_per_row=1024 vec=8 registers cluster=16 shared_prefetch=1 shared_prefetch_dy_only shared_sums shared_weights"
GPU_TEST_SHARDS=8 GPU_TEST_FILTER='BackwardSharedPrefetch.*' BUILD_DIR=$B OUT=$L/tests timeout 250 scripts/gpu-run.sh gpu-tests > $OUT/tests.txt 2>&1
echo "tests exit $? at ${SECONDS}s"; tail -5 $OUT/tests.txt
tar czf $OUT/call2.tgz -C $OUT logs && rm -rf $L
