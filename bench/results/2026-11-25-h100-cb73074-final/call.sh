#!/usr/bin/env bash
# Session 20, call 7: at the session's code (shared_weights a config field, recompute's held
# x̂ and its rules): every GPU test; the speed sweep (issue 3: every dtype and weight dtype,
# graph replays, JSON); the fused scan at model widths (issue 5), bf16, fp32 γ.
set -uo pipefail
b=build-device; o=$OUT
GPU_TEST_SHARDS=12 BUILD_DIR=$b scripts/gpu-run.sh gpu-tests > $o/gpu-run.txt 2>&1; echo "gpu tests exit $? at ${SECONDS}s"
grep -E "^shard" $o/gpu-run.txt
gzip -f $o/gpu-tests.txt
NORMJIT_CACHE_DIR=$(mktemp -d) timeout 200 $b/normjit bench --graph --json $o/bench.json > $o/bench.txt 2>&1; echo "sweep exit $? at ${SECONDS}s"
NORMJIT_CACHE_DIR=$(mktemp -d) timeout 150 $b/normjit bench --graph --dtypes bf16 --weights fp32 \
  --n 1280,2560,4096,5120,8192,12288,14336,16384 --fused residual,all,gate,gate-before,parallel,recompute \
  --json $o/fused.json > $o/fused.txt 2>&1; echo "fused exit $? at ${SECONDS}s"
ls -la $o
