#!/usr/bin/env bash
# Session 17, call 14 (09ae6d1): the forward's GPU tests after the 4-element-slot rule, and bench
# --forward of LayerNorm at N = 16384-36864 (the rule's range) with this build.
set -uo pipefail
b=build-device; o=$OUT
scripts/gpu-environment.sh $b > $o/environment.txt 2>&1
export NORMJIT_CACHE_DIR=$(mktemp -d)
timeout 240 $b/tests/normjit_gpu_tests --gtest_filter='Forward.*:ForwardFused.*:ForwardTuning.*' > $o/gpu-tests-forward.txt 2>&1
echo "forward tests rc=$? at ${SECONDS}s"; grep -hE "^\[  (FAILED|PASSED) |candidates checked|Failure" $o/gpu-tests-forward.txt | head
timeout 100 $b/normjit bench --forward --graph --kinds layernorm --dtypes bf16,fp16 --weights fp32 --n 16384,17408,20480,24576,28672,32768,36864 --json $o/bench.json > $o/bench.txt 2>&1
grep -E "^layernorm" $o/bench.txt | cut -c1-130
