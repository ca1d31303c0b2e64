#!/usr/bin/env bash
# Session 10, call 1, on 439c123 (session 9's last commit): what session 9 had no device time
# for. The Python GPU suite on the current kernels (issue 6), the cold tune with the tuner's
# costliest-first compile order (issue 4), and initcheck over every fused test (issue 7).
set -uo pipefail
b=build-device; o=$OUT
scripts/gpu-environment.sh $b > $o/environment.txt 2>&1
export NORMJIT_CACHE_DIR=$(mktemp -d)
for pass in cold warm; do
  for args in "--kind layernorm --n 8192 --dtype bf16 --weight-dtype fp32 --m 8192" "--kind rmsnorm --n 4096 --dtype bf16 --weight-dtype fp32 --m 16384" "--kind layernorm --n 32768 --dtype fp32 --m 2048"; do
    timeout 40 $b/normjit tune $args 2>/dev/null | grep -E "^(layer|rms)" | cut -c1-180 | sed "s/^/$pass /"
  done
done > $o/tune-time.txt 2>&1
BUILD_DIR=$b timeout 250 scripts/gpu-python.sh > /dev/null 2>&1; echo "gpu-python exit $?" >> $o/python.txt
fused='*BackwardFused*:EachOrder/BackwardGated.MatchesFloat64ReferenceOverTheIssuesShapes/*:BackwardParallel.*:BackwardRecompute.*'
BUILD_DIR=$b SANITIZE_WARMUP=0 SANITIZE_TOOLS="initcheck" SANITIZE_FILTER_initcheck="$fused" TIMEOUT_initcheck=230 scripts/gpu-sanitize.sh > /dev/null 2>&1
echo "sanitize exit $?" >> $o/sanitize.txt
tail -5 $o/sanitize.txt
