#!/usr/bin/env bash
# Call A: first GPU run of the forward (next/forward rebased on main), its bench, and the fp32
# few-rows rule (tune exhaustive + latency).
set -uo pipefail
b=build; o=$OUT
export NORMJIT_CACHE_DIR=$(mktemp -d)
{ echo "date: $(date -u +%FT%TZ)"; echo "commit: $(cat $b/COMMIT)"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } > $o/environment.txt
cat $o/environment.txt
t0=$(date +%s)
timeout 240 $b/tests/normjit_gpu_tests --gtest_filter='Forward.*:CApiOnGpu.*' > $o/gpu-tests-forward.txt 2>&1; echo "forward tests rc=$? $(( $(date +%s)-t0 ))s"
grep -E "^\[  (FAILED|PASSED|SKIPPED|  OK) |Failure|error" $o/gpu-tests-forward.txt | head -40
t0=$(date +%s)
timeout 120 $b/normjit bench --forward --dtypes bf16,fp32 --weights fp32 --latency --graph --json $o/bench-forward.json > $o/bench-forward.txt 2>&1; echo "bench forward rc=$? $(( $(date +%s)-t0 ))s"
t0=$(date +%s)
timeout 120 $b/normjit tune --exhaustive --shapes bench/tune-fewrows.toml > $o/tune-fewrows.txt 2>&1; echo "tune rc=$? $(( $(date +%s)-t0 ))s"
t0=$(date +%s)
timeout 60 $b/normjit bench --latency --graph --dtypes fp32 --weights fp32 --n 1024,4096,8192 --m 1,8,37,199 --json $o/bench-latency.json > $o/bench-latency.txt 2>&1; echo "latency rc=$? $(( $(date +%s)-t0 ))s"
tail -5 $o/tune-fewrows.txt
