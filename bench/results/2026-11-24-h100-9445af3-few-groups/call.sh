#!/usr/bin/env bash
# Session 13, call 2: EveryN/BackwardFewGroups.* for N <= 65536 (option-free and fused configs of
# M = 199 and 4096 over two row groups) plain as the warm-up, then under racecheck; then, with
# what is left of the call, exhaustive tuning of fused problems at N = 4096 (issue 5: options at
# 0.47-0.82 of the option-free kernel there).
set -uo pipefail
b=build-device; o=$OUT
scripts/gpu-environment.sh $b > $o/environment.txt 2>&1
BUILD_DIR=$b OUT=$o SANITIZE_TOOLS=racecheck SANITIZE_FILTER_racecheck='EveryN/BackwardFewGroups.*-*/N262144' \
  TIMEOUT_racecheck=400 WARMUP_TIMEOUT=120 timeout 540 scripts/gpu-sanitize.sh | tail -4
grep -E "^\[  FAILED|^\[       OK|Race|RACECHECK SUMMARY" $o/sanitize.txt | head -40
export NORMJIT_CACHE_DIR=$(mktemp -d)
left=$((590 - SECONDS))
p="--n 4096 --dtype bf16 --weight-dtype fp32 --m 16384 --exhaustive"
timeout $left bash -c "
  $b/normjit tune --kind layernorm $p --parallel
  $b/normjit tune --kind rmsnorm $p --gate after-norm
  $b/normjit tune --kind layernorm $p --residual --zero-centered-weight --rowscale --dropout bits
  $b/normjit tune --kind rmsnorm $p --residual
  $b/normjit tune --kind rmsnorm $p
  $b/normjit tune --kind layernorm $p
" 2>/dev/null > $o/tune-fused-4096.txt
echo "exit $?" >> $o/tune-fused-4096.txt
grep -E "^(layer|rms)" $o/tune-fused-4096.txt
