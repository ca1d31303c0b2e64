#!/usr/bin/env bash
# Session 49, call 2 (H200). build-device at bb0094c (as call 1).
# Issue 5's standing after session 48's diet, and where the fused rows' instructions go:
# 1. bench --graph --fused, every option set, LN and RMS bf16 fp32 γ at 4096-32768.
# 2. Nsight Compute (--set full, instructions executed per SASS line) of the heuristic's kernel:
#    RMS bf16 16384 option-free and gated (after the norm), LN bf16 16384 with parallel norms,
#    recompute from the output, and the residual.
set -uo pipefail
B=build-device
export NORMJIT_CACHE_DIR=$(mktemp -d)
$B/normjit bench --graph --dtypes bf16 --weights fp32 --n 4096,8192,16384,32768 \
  --fused residual,all,gate,gate-before,parallel,recompute --json $OUT/fused.json > $OUT/fused.txt 2>&1
echo "fused exit $? at $SECONDS s"; cut -c1-40,95-200 $OUT/fused.txt | grep -E "^(layer|rms)" 
t="$B/normjit tune --dtype bf16 --weight-dtype fp32 --m 4096 --n 16384"
scripts/ncu-profile.sh $OUT/ncu rms-none -- $t --kind rmsnorm
scripts/ncu-profile.sh $OUT/ncu rms-gate -- $t --kind rmsnorm --gate after-norm
scripts/ncu-profile.sh $OUT/ncu ln-none -- $t --kind layernorm
scripts/ncu-profile.sh $OUT/ncu ln-parallel -- $t --kind layernorm --parallel
scripts/ncu-profile.sh $OUT/ncu ln-recompute -- $t --kind layernorm --recompute-from-output
scripts/ncu-profile.sh $OUT/ncu ln-residual -- $t --kind layernorm --residual
echo "ncu done at $SECONDS s"; for f in $OUT/ncu/*-mix.txt; do echo "== $f"; head -12 $f; done
tar czf $OUT/call2-logs.tgz -C $OUT ncu fused.txt fused.json 2>/dev/null; rm -f $OUT/ncu/*-sass.csv.unused
