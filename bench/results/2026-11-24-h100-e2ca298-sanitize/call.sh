#!/usr/bin/env bash
# Call D of session 9: compute-sanitizer memcheck over the matrix, the fused, gated, parallel,
# recompute, grid-cluster and SM-margin tests; racecheck over the fused, gated, parallel,
# recompute tests (packed rows under every option). Then the fused bandwidth again (the parallel
# rule of this commit).
set -uo pipefail
b=build-device; o=$OUT
export NORMJIT_CACHE_DIR=$(mktemp -d)
scripts/gpu-environment.sh $b > $o/environment.txt 2>&1; head -3 $o/environment.txt
t0=$(date +%s)
timeout 60 $b/normjit bench --dtypes bf16 --weights fp32 --n 4096,8192,32768 --fused none,residual,all,parallel,gate,recompute --json $o/bench-fused.json > $o/bench-fused.txt 2>&1; echo "fused bench rc=$? $(( $(date +%s)-t0 ))s"
grep -E "^(layer|rms)" $o/bench-fused.txt | awk '{print $1,$5,$6,$9,$NF, $(NF-3), $(NF-2)}'
t0=$(date +%s)
BUILD_DIR=$b SANITIZE_TOOLS="memcheck racecheck" \
  SANITIZE_FILTER_memcheck='AllVariants/BackwardMatrix.*:*BackwardFused*:*BackwardGated*:*BackwardParallel*:BackwardRecompute*:BackwardGridCluster*:BackwardSmMargin*' \
  SANITIZE_FILTER_racecheck='*BackwardFused*:*BackwardGated*:*BackwardParallel*:BackwardRecompute*' \
  TIMEOUT_memcheck=160 TIMEOUT_racecheck=200 WARMUP_TIMEOUT=150 scripts/gpu-sanitize.sh > /dev/null 2>&1
echo "gpu-sanitize rc=$? $(( $(date +%s)-t0 ))s"
grep -E "^sanitize:" $o/sanitize.txt | tail -6
