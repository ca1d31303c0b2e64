#!/usr/bin/env bash
# Call E of session 8: shared-sums candidates with prefetch (tests, exhaustive tuning), the
# small-M latency after few rows dropped shared sums, and the fused options' bandwidth.
set -uo pipefail
b=build-device; o=$OUT
export NORMJIT_CACHE_DIR=$(mktemp -d)
{ echo "date: $(date -u +%FT%TZ)"; echo "commit: $(cat $b/COMMIT)"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } > $o/environment.txt
cat $o/environment.txt
t0=$(date +%s)
timeout 120 $b/tests/normjit_gpu_tests --gtest_filter='BackwardSharedSums.*' > $o/gpu-tests-shared-sums.txt 2>&1; echo "shared-sums tests rc=$? $(( $(date +%s)-t0 ))s"
grep -E "^\[  (FAILED|PASSED|SKIPPED) |Failure" $o/gpu-tests-shared-sums.txt | head -10
t0=$(date +%s)
timeout 150 $b/normjit tune --exhaustive --shapes bench/tune-shared-sums.toml > $o/tune-shared-sums.txt 2>/dev/null; echo "tune rc=$? $(( $(date +%s)-t0 ))s"
grep -vE "^  fit" $o/tune-shared-sums.txt | cut -c1-230
t0=$(date +%s)
timeout 60 $b/normjit bench --dtypes bf16 --weights fp32 --n 4096,8192 --m 1,37,199 --graph --json $o/bench-latency.json > $o/bench-latency.txt 2>&1; echo "latency rc=$? $(( $(date +%s)-t0 ))s"
grep -E "^(layer|rms)" $o/bench-latency.txt | cut -c1-140
t0=$(date +%s)
timeout 120 $b/normjit bench --dtypes bf16 --weights fp32 --n 8192,32768 --fused none,all,parallel,gate,recompute --json $o/bench-fused.json > $o/bench-fused.txt 2>&1; echo "fused rc=$? $(( $(date +%s)-t0 ))s"
