#!/usr/bin/env bash
# Session 13, call 4 (0fb0bd3): exhaustive tuning of the two fused sets at bf16 4096 that call 3
# left short (RMSNorm parallel 0.60, LayerNorm recompute 0.87 of the option-free row), then
# EveryN/BackwardFewGroups.*/N262144 (option-free and fused) plain as the warm-up and under
# racecheck (call 2 covered N <= 65536).
set -uo pipefail
b=build-device; o=$OUT
scripts/gpu-environment.sh $b > $o/environment.txt 2>&1
export NORMJIT_CACHE_DIR=$(mktemp -d)
p="--n 4096 --dtype bf16 --weight-dtype fp32 --m 16384 --exhaustive"
timeout 100 bash -c "
  $b/normjit tune --kind rmsnorm $p --parallel
  $b/normjit tune --kind layernorm $p --recompute-from-output
" 2>/dev/null > $o/tune-fused-4096.txt
echo "exit $?" >> $o/tune-fused-4096.txt
grep -E "^(layer|rms)" $o/tune-fused-4096.txt
unset NORMJIT_CACHE_DIR
BUILD_DIR=$b OUT=$o SANITIZE_TOOLS=racecheck SANITIZE_FILTER_racecheck='EveryN/BackwardFewGroups.*/N262144' \
  TIMEOUT_racecheck=$((560 - SECONDS - 60)) WARMUP_TIMEOUT=60 timeout $((585 - SECONDS)) scripts/gpu-sanitize.sh | tail -4
grep -E "^\[  FAILED|^\[       OK|Race|RACECHECK SUMMARY" $o/sanitize.txt | head -20
