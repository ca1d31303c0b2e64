#!/usr/bin/env bash
# Session 6, device call B: next/partial-vectors (build-pv) against main (build).
set -uo pipefail
out="${OUT:-/tmp/o}"; mkdir -p "$out"
export NORMJIT_CACHE_DIR="$(mktemp -d)"
{ echo "date: $(date -u +%FT%TZ) main: $(cat build/COMMIT) pv: $(cat build-pv/COMMIT)"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } > "$out/environment.txt"
t0=$(date +%s)
F='BackwardMerge.*:BackwardDeterminism.*:BackwardDtypes.*:BackwardEdgeCases.*:BackwardLayout.*:Tuning.*:BackwardNumerics.*:AllVariants/BackwardMatrix.*/LayerNorm_bf16_weightf32_WeightAndBias:AllVariants/BackwardMatrix.*/LayerNorm_f16_weightf16_WeightAndBias:AllVariants/BackwardMatrix.*/RMSNorm_f32_weightf32_WeightOnly:AllVariants/BackwardMatrix.*/LayerNorm_bf16_weightbf16_BiasOnly'
timeout 220 build-pv/tests/normjit_gpu_tests --gtest_filter="$F" > "$out/pv-gpu-tests.txt" 2>&1; echo "pv gpu-tests rc=$? $(( $(date +%s)-t0 ))s" | tee -a "$out/environment.txt"
grep -E "^\[  (FAILED|PASSED|SKIPPED) |tests? ran" "$out/pv-gpu-tests.txt" | head -20
S='--graph --kinds layernorm,rmsnorm --dtypes bf16,fp32 --weights fp32 --n 1024,4096,8192 --m 2,8,37,199,4096 --merge 1'
for v in build build-pv; do
  t0=$(date +%s)
  timeout 100 $v/normjit bench $S > "$out/bench-$v.txt" 2>&1; echo "bench $v rc=$? $(( $(date +%s)-t0 ))s" | tee -a "$out/environment.txt"
done
L='--kinds layernorm,rmsnorm --dtypes bf16,fp32 --weights fp32 --n 1024,4096,8192,32768'
for v in build build-pv; do
  timeout 100 $v/normjit bench $L > "$out/sweep-$v.txt" 2>&1; echo "sweep $v rc=$?" | tee -a "$out/environment.txt"
done
timeout 60 build/normjit bench --overhead > "$out/overhead.txt" 2>&1; echo "overhead rc=$?" | tee -a "$out/environment.txt"
tail -12 "$out/overhead.txt"
