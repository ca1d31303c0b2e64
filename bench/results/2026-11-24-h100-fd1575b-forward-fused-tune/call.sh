#!/usr/bin/env bash
# Session 10, call 13: the forward's fused options tuned exhaustively over N (bf16, fp32 γ,
# M·N = 64 Mi): LN and RMS x residual, residual + dropout bytes, rowscale + dropout bits, at
# N = 4096 .. 65536: the data for a fused-forward heuristic.
set -uo pipefail
b=build-device; o=$OUT
scripts/gpu-environment.sh $b > $o/environment.txt 2>&1
export NORMJIT_CACHE_DIR=$(mktemp -d)
for kind in layernorm rmsnorm; do for opts in "--residual" "--residual --dropout bytes" "--rowscale --dropout bits"; do
  for n in 4096 8192 16384 32768 65536; do
    timeout 30 $b/normjit tune --forward --kind $kind $opts --n $n --m $((67108864 / n)) --dtype bf16 --weight-dtype fp32 --exhaustive 2>&1 | grep -E "^(layer|rms)" | cut -c1-400
  done; done; done > $o/tune-forward-fused.txt 2>&1
wc -l $o/tune-forward-fused.txt
