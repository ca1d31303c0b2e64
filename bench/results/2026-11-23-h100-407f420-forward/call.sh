#!/usr/bin/env bash
# Call D: the forward after the measured reduction rules; its GPU tests under memcheck, racecheck, synccheck.
set -uo pipefail
b=build-device; o=$OUT
export NORMJIT_CACHE_DIR=$(mktemp -d)
{ echo "date: $(date -u +%FT%TZ)"; echo "commit: $(cat $b/COMMIT)"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } > $o/environment.txt
cat $o/environment.txt
t0=$(date +%s)
timeout 240 $b/tests/normjit_gpu_tests --gtest_filter='Forward.*' > $o/gpu-tests-forward.txt 2>&1; echo "forward tests rc=$? $(( $(date +%s)-t0 ))s"
grep -E "^\[  (FAILED|PASSED|SKIPPED) |Failure" $o/gpu-tests-forward.txt | head -20
t0=$(date +%s)
timeout 200 $b/normjit bench --forward --dtypes bf16,fp16,fp32 --weights fp32 --latency --graph --json $o/bench-forward.json > $o/bench-forward.txt 2>&1; echo "bench forward rc=$? $(( $(date +%s)-t0 ))s"
cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tool in memcheck racecheck synccheck; do
  t0=$(date +%s)
  timeout 150 $cs --tool $tool --error-exitcode 1 $b/tests/normjit_gpu_tests --gtest_filter='Forward.*' > $o/sanitize-forward-$tool.txt 2>&1
  echo "$tool rc=$? $(( $(date +%s)-t0 ))s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' $o/sanitize-forward-$tool.txt | tr '\n' ' ')"
done
