#!/usr/bin/env bash
# Session 6, device call A: main build (95748ba + bench --merge).
set -uo pipefail
out="${OUT:-/tmp/o}"; mkdir -p "$out"
export NORMJIT_CACHE_DIR="$(mktemp -d)"
b=build
{ echo "date: $(date -u +%FT%TZ) commit: $(cat $b/COMMIT)"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } > "$out/environment.txt"
t0=$(date +%s)
F='FullDisk.*:BackwardMerge.*:BackwardDeterminism.*:AllVariants/BackwardMatrix.*/RMSNorm_f16_NoAffine:AllVariants/BackwardMatrix.*/RMSNorm_bf16_*'
timeout 150 $b/tests/normjit_gpu_tests --gtest_filter="$F" > "$out/gpu-tests.txt" 2>&1; echo "gpu-tests rc=$? $(( $(date +%s)-t0 ))s" | tee -a "$out/environment.txt"
grep -E "^\[  (FAILED|PASSED|SKIPPED) |tests? ran" "$out/gpu-tests.txt" | head -20
t0=$(date +%s)
cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer); timeout 150 $cs --tool racecheck --racecheck-report all $b/tests/normjit_gpu_tests --gtest_filter='BackwardMerge.*' > "$out/racecheck-merge.txt" 2>&1; echo "racecheck rc=$? $(( $(date +%s)-t0 ))s" | tee -a "$out/environment.txt"
tail -3 "$out/racecheck-merge.txt"
t0=$(date +%s)
timeout 230 $b/normjit bench --graph --kinds layernorm,rmsnorm --dtypes bf16,fp32 --weights fp32 --n 1024,4096,8192 --m 2,8,37,199 --merge 1,2,8 --json "$out/bench-merge.json" > "$out/bench-merge.txt" 2>&1; echo "bench-merge rc=$? $(( $(date +%s)-t0 ))s" | tee -a "$out/environment.txt"
tail -5 "$out/bench-merge.txt"
