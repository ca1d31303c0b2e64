#!/usr/bin/env bash
# Call B of session 9: packed rows under the fused options. The fused, gated, parallel,
# recompute and shared-sums tests; the fused options' bandwidth against the option-free row
# (compare -877806f/bench-fused.txt, unpacked); exhaustive tuning of the fused shapes.
set -uo pipefail
b=build-device; o=$OUT
export NORMJIT_CACHE_DIR=$(mktemp -d)
scripts/gpu-environment.sh $b > $o/environment.txt 2>&1; head -3 $o/environment.txt
t0=$(date +%s)
timeout 120 $b/normjit bench --dtypes bf16 --weights fp32 --n 4096,8192,32768 --fused none,residual,all,parallel,gate,recompute --json $o/bench-fused.json > $o/bench-fused.txt 2>&1; echo "fused bench rc=$? $(( $(date +%s)-t0 ))s"
grep -E "^(layer|rms)" $o/bench-fused.txt | awk '{print $1,$5,$6,$9,$NF, $(NF-3), $(NF-2)}'
t0=$(date +%s)
for args in "--kind rmsnorm --gate after-norm --n 8192 --m 8192" "--kind rmsnorm --gate before-norm --n 8192 --m 8192" \
            "--kind layernorm --recompute-from-output --n 8192 --m 8192" "--kind layernorm --recompute-from-output --n 32768 --m 2048" \
            "--kind layernorm --parallel --n 8192 --m 8192" "--kind rmsnorm --gate after-norm --n 32768 --m 2048"; do
  timeout 40 $b/normjit tune --exhaustive --dtype bf16 --weight-dtype fp32 $args >> $o/tune-fused.txt 2>/dev/null || echo "tune $args rc=$?"
done; echo "tune $(( $(date +%s)-t0 ))s"
grep -E "^(layer|rms)" $o/tune-fused.txt | cut -c1-250
t0=$(date +%s)
timeout 330 $b/tests/normjit_gpu_tests --gtest_filter='*BackwardFused*:*BackwardGated*:*BackwardParallel*:BackwardRecompute*:BackwardSharedSums*' > $o/gpu-tests.txt 2>&1; echo "gpu tests rc=$? $(( $(date +%s)-t0 ))s"
grep -E "^\[  (FAILED|PASSED|SKIPPED) |Failure" $o/gpu-tests.txt | head -30
