#!/usr/bin/env bash
# Session 10, call 3: the forward's fused options again (h now checked bit for bit), memcheck
# over them, and their speed: bench --forward --fused at N = 4096, 8192, 32768 (bf16, fp32 γ),
# each option set against the option-free forward of the same shape.
set -uo pipefail
b=build-device; o=$OUT
scripts/gpu-environment.sh $b > $o/environment.txt 2>&1
export NORMJIT_CACHE_DIR=$(mktemp -d)
t=$b/tests/normjit_gpu_tests
timeout 120 $t --gtest_filter='ForwardFused.*' > $o/forward-fused.txt 2>&1; echo "exit $?" >> $o/forward-fused.txt
timeout 120 $t --gtest_filter='ForwardFused.*' > $o/forward-fused-again.txt 2>&1; echo "exit $?" >> $o/forward-fused-again.txt
timeout 150 compute-sanitizer --tool memcheck --error-exitcode 3 $t --gtest_filter='ForwardFused.*' > $o/memcheck-forward-fused.txt 2>&1; echo "exit $?" >> $o/memcheck-forward-fused.txt
timeout 150 $b/normjit bench --forward --kinds layernorm,rmsnorm --dtypes bf16 --weights fp32 --n 4096,8192,32768 \
  --fused none,residual,rowscale+dropout-bits,residual+dropout-bytes,gate,gate-before,parallel \
  --json $o/bench-forward-fused.json > $o/bench-forward-fused.txt 2>&1; echo "exit $?" >> $o/bench-forward-fused.txt
tail -n 3 $o/*.txt
