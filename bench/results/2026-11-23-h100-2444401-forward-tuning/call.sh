#!/usr/bin/env bash
# Call E: forward tuning (tests, exhaustive tune over bench/tune-forward.toml), and the backward
# GPU subsets the engine's launch refactor touches (plain, cluster and cooperative grid launches).
set -uo pipefail
b=build-device; o=$OUT
export NORMJIT_CACHE_DIR=$(mktemp -d)
{ echo "date: $(date -u +%FT%TZ)"; echo "commit: $(cat $b/COMMIT)"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } > $o/environment.txt
cat $o/environment.txt
t0=$(date +%s)
timeout 200 $b/tests/normjit_gpu_tests --gtest_filter='Forward.*:ForwardTuning.*' > $o/gpu-tests-forward.txt 2>&1; echo "forward tests rc=$? $(( $(date +%s)-t0 ))s"
grep -E "^\[  (FAILED|PASSED|SKIPPED) |Failure|candidates checked" $o/gpu-tests-forward.txt | head -20
t0=$(date +%s)
timeout 200 $b/tests/normjit_gpu_tests --gtest_filter='BackwardGridCluster.*:Tuning.*:CApiOnGpu.*:BackwardMerge.*:BackwardDeterminism.*:BackwardStridedRows.*:BackwardMisalignedPointers.*:BackwardZeroRows.*:BackwardWorkspace.*:AllVariants/BackwardMatrix.*LayerNorm_bf16*' > $o/gpu-tests-backward.txt 2>&1; echo "backward tests rc=$? $(( $(date +%s)-t0 ))s"
grep -E "^\[  (FAILED|PASSED|SKIPPED) |Failure" $o/gpu-tests-backward.txt | head -20
t0=$(date +%s)
timeout 240 $b/normjit tune --forward --exhaustive --shapes bench/tune-forward.toml > $o/tune-forward.txt 2>/dev/null; echo "tune forward rc=$? $(( $(date +%s)-t0 ))s"
grep -E "^(layernorm|rmsnorm)" $o/tune-forward.txt | awk '{print $1, $3, $4, $(NF-?0:0)}' | head -0
t0=$(date +%s)
timeout 60 $b/normjit bench --dtypes bf16 --weights fp32 --n 1024,4096,8192,32768,262144 --json $o/bench-backward.json > $o/bench-backward.txt 2>&1; echo "bench backward rc=$? $(( $(date +%s)-t0 ))s"
