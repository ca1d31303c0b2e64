#!/usr/bin/env bash
# Session 18, call 14: scripts/bench-ab.sh on the GPU machine once (157fafe against this
# commit at two shapes a rule changed and one it did not), and the forward GPU tests after the
# template's cluster helpers (block_rank, row_group: PTX identical, run anyway).
set -uo pipefail
b=build-device; o=$OUT
scripts/bench-ab.sh $b/v/old $b/normjit $o bwd "--graph --weights fp32 --dtypes bf16 --kinds rmsnorm --n 1536,2048" fwd "--forward --graph --weights fp32 --dtypes bf16 --kinds layernorm --n 36864"
export NORMJIT_CACHE_DIR=$(mktemp -d)
timeout 200 $b/tests/normjit_gpu_tests --gtest_filter='Forward.*:ForwardFused.*' > $o/gpu-forward.txt 2>&1; echo "forward tests exit $?"
grep -E "^\[  (PASSED|FAILED)" $o/gpu-forward.txt
