#!/usr/bin/env bash
# Session 13, call 9: the fused bandwidth after the fp16 exception, fresh cache, no tuning
# database: 4096, 8192, 32768, bf16 and fp16, fp32 γ; and BackwardFewGroups at 32768.
set -uo pipefail
b=build-device; o=$OUT
scripts/gpu-environment.sh $b > $o/environment.txt 2>&1
export NORMJIT_CACHE_DIR=$(mktemp -d)
timeout 100 $b/normjit bench --dtypes bf16,fp16 --weights fp32 --n 4096,8192,32768 --fused none,residual,all,parallel,gate,gate-before,recompute --json $o/bench-fused.json > $o/bench-fused.txt 2>&1; echo "fused bench exit $?" >> $o/bench-fused.txt
timeout 100 $b/tests/normjit_gpu_tests --gtest_filter='EveryN/BackwardFewGroups.*/N32768' > $o/gpu-tests.txt 2>&1; echo "exit $?" >> $o/gpu-tests.txt
grep -E "^\[  (FAILED|PASSED) |^exit" $o/gpu-tests.txt
