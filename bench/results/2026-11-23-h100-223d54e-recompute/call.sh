#!/usr/bin/env bash
# Session 6, device call D1: recompute-from-output's first GPU run, the fused families, the matrix variants the 61b9de6 call cut.
set -uo pipefail
out="${OUT:-/tmp/o}"; mkdir -p "$out"
export NORMJIT_CACHE_DIR="$(mktemp -d)"
b=build
{ echo "date: $(date -u +%FT%TZ) commit: $(cat $b/COMMIT)"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } > "$out/environment.txt"
t0=$(date +%s)
timeout 100 $b/tests/normjit_gpu_tests --gtest_filter='BackwardRecompute.*' > "$out/gpu-tests-recompute.txt" 2>&1; echo "recompute rc=$? $(( $(date +%s)-t0 ))s" | tee -a "$out/environment.txt"
grep -E "^\[  (FAILED|PASSED|SKIPPED) |^\[  +OK|tests? ran" "$out/gpu-tests-recompute.txt" | head -20
t0=$(date +%s)
export NORMJIT_LIBRARY="$PWD/$b/libnormjit.so"
(cd python/tests && timeout 90 python3 -m unittest -v test_torch_gpu.RecomputeTest test_ops_fake_mode) > "$out/python-recompute.txt" 2>&1; echo "python recompute rc=$? $(( $(date +%s)-t0 ))s" | tee -a "$out/environment.txt"
tail -4 "$out/python-recompute.txt"
t0=$(date +%s)
timeout 60 $b/normjit bench --kinds layernorm,rmsnorm --dtypes bf16 --weights fp32 --n 4096,8192,32768 --fused recompute,residual+recompute > "$out/bench-fused-recompute.txt" 2>&1; echo "bench rc=$? $(( $(date +%s)-t0 ))s" | tee -a "$out/environment.txt"
grep -E "^(layernorm|rmsnorm)" "$out/bench-fused-recompute.txt" | awk '{print $1,$2,$4,$5,$9,$(NF-1),$NF}'
t0=$(date +%s)
M='AllVariants/BackwardMatrix.*-*/LayerNorm_f32_*:*/LayerNorm_f16_weightf32_WeightAndBias:*/LayerNorm_f16_weightf16_WeightAndBias:*/LayerNorm_f16_weightf32_WeightOnly:*/LayerNorm_f16_weightf16_WeightOnly:*/LayerNorm_f16_weightf32_BiasOnly'
timeout 330 $b/tests/normjit_gpu_tests --gtest_filter="*BackwardFused*:*BackwardGated*:*BackwardParallel*:$M" > "$out/gpu-tests.txt" 2>&1; echo "fused+matrix rc=$? $(( $(date +%s)-t0 ))s" | tee -a "$out/environment.txt"
grep -E "^\[  (FAILED|PASSED|SKIPPED) |tests? ran" "$out/gpu-tests.txt" | head -20
