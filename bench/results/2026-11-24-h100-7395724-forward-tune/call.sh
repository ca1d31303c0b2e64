#!/usr/bin/env bash
# Session 10, call 6: exhaustive forward tuning of the fused shapes the heuristic serves worst
# (bf16, fp32 γ, N = 32768, M = 2048: LayerNorm residual, residual + dropout bytes; RMSNorm
# residual + dropout bytes, rowscale + dropout bits) and the option-free LayerNorm beside them.
set -uo pipefail
b=build-device; o=$OUT
scripts/gpu-environment.sh $b > $o/environment.txt 2>&1
export NORMJIT_CACHE_DIR=$(mktemp -d)
for args in "--kind layernorm" "--kind layernorm --residual" "--kind layernorm --residual --dropout bytes" \
            "--kind rmsnorm --residual --dropout bytes" "--kind rmsnorm --rowscale --dropout bits" "--kind layernorm --rowscale --dropout bits"; do
  timeout 60 $b/normjit tune --forward $args --n 32768 --dtype bf16 --weight-dtype fp32 --m 2048 --exhaustive 2>&1 | grep -E "^(layer|rms)" | cut -c1-400
done > $o/tune-forward-fused.txt 2>&1
cat $o/tune-forward-fused.txt | cut -c1-250
