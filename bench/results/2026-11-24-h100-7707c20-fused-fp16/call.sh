#!/usr/bin/env bash
# Session 13, call 8 (7707c20): call 7 read fp16 RMSNorm recompute (0.71 -> 0.66) and the gate
# (0.66 -> 0.63) at 32768 lower under the new cluster rule, fitted on bf16: exhaustive tuning of
# those fp16 sets (M = 2048), and the fused bench at 32768 again (both dtypes) for the noise.
set -uo pipefail
b=build-device; o=$OUT
scripts/gpu-environment.sh $b > $o/environment.txt 2>&1
export NORMJIT_CACHE_DIR=$(mktemp -d)
p="--n 32768 --m 2048 --dtype fp16 --weight-dtype fp32 --exhaustive"
timeout 200 bash -c "
  $b/normjit tune --kind rmsnorm $p --recompute-from-output
  $b/normjit tune --kind rmsnorm $p --gate after-norm
  $b/normjit tune --kind layernorm $p --recompute-from-output
  $b/normjit tune --kind layernorm $p --parallel
" 2>/dev/null > $o/tune-fused-fp16.txt
echo "exit $?" >> $o/tune-fused-fp16.txt
grep -E "^(layer|rms)" $o/tune-fused-fp16.txt | awk '{for(i=1;i<=NF;i++) if ($i ~ /^M<=/) {print $1, $2, $(i-1), $(i+2), $(i+3), $(i+4), $(i+5)}}'
timeout 100 $b/normjit bench --dtypes bf16,fp16 --weights fp32 --n 32768 --fused none,parallel,gate,gate-before,recompute --json $o/bench-fused.json > $o/bench-fused.txt 2>&1; echo "fused bench exit $?" >> $o/bench-fused.txt
