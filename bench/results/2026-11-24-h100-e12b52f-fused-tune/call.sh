#!/usr/bin/env bash
# Session 13, call 6 (e12b52f): exhaustive tuning of the fused sets still short of the option-free
# row at bf16 8192 (M = 8192) and 32768 (M = 2048): parallel norms, the gate, recompute.
set -uo pipefail
b=build-device; o=$OUT
scripts/gpu-environment.sh $b > $o/environment.txt 2>&1
export NORMJIT_CACHE_DIR=$(mktemp -d)
timeout 560 bash -c "
  for nm in '8192 8192' '32768 2048'; do
    set -- \$nm
    p=\"--n \$1 --m \$2 --dtype bf16 --weight-dtype fp32 --exhaustive\"
    $b/normjit tune --kind layernorm \$p --parallel
    $b/normjit tune --kind rmsnorm \$p --parallel
    $b/normjit tune --kind rmsnorm \$p --gate after-norm
    $b/normjit tune --kind layernorm \$p --recompute-from-output
    $b/normjit tune --kind rmsnorm \$p --recompute-from-output
  done
" 2>/dev/null > $o/tune-fused.txt
echo "exit $?" >> $o/tune-fused.txt
grep -E "^(layer|rms)" $o/tune-fused.txt | cut -c1-110,150-
