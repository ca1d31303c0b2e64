#!/usr/bin/env bash
# Session 23, call 1 (working tree on 5ed1f96 plus an experiment hook not committed: NJ_EXP_WM=1
# gives the forward's LayerNorm rows of more than 256 threads warp-shifted moments, one meeting
# (templates/norm_forward.cuh warp_shifted_moments) instead of the mean and then Σ(x − mean)²;
# NJ_EXP_WM=2 also for rows of 33-256 threads, instead of Chan's butterfly merges).
# First the forward GPU tests with NJ_EXP_WM=2 (the new path must match the reference), then
# A/B timings against the same binary without the hook.
set -uo pipefail
b=build-device; o=$OUT; w=$(mktemp -d)
NJ_EXP_WM=2 GPU_TEST_SHARDS=8 GPU_TEST_FILTER='Forward*' BUILD_DIR=$b OUT=$o/tests scripts/gpu-run.sh gpu-tests > $o/tests.txt 2>&1
echo "tests rc=$? at ${SECONDS}s"; tail -5 $o/tests.txt
scripts/bench-ab.sh $b/normjit $b/v/wm1 $w \
  odd "--forward --graph --kinds layernorm --weights fp32 --dtypes bf16,fp16,fp32 --n 2049,3001,4095,5003,6001,8191,12289,16385,24577" \
  wide "--forward --graph --kinds layernorm --weights fp32 --dtypes bf16,fp32 --n 12288,14336,16384" > $o/ab-wm1.txt 2>&1
echo "wm1 done at ${SECONDS}s"; cat $o/ab-wm1.txt
scripts/bench-ab.sh $b/normjit $b/v/wm2 $w \
  small "--forward --graph --kinds layernorm --weights fp32 --dtypes bf16,fp16,fp32 --n 1024,2048,3000,4096,5120,7168,8192" > $o/ab-wm2.txt 2>&1
echo "wm2 done at ${SECONDS}s"; cat $o/ab-wm2.txt
(cd $w && tar -czf $o/results.tgz *.json)
