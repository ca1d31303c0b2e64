#!/usr/bin/env bash
# Session 56, call 1 (H200). build-device at 46e7ee6 (session 55's final code). Where LayerNorm's
# recompute from y waits at odd N (bf16 fp32 γ 4095: 20% of copy, 0.27 of the option-free row;
# RMSNorm's 0.57 in the same shape of kernel): Nsight Compute of the heuristic's kernel for LN and
# RMS recompute and LN option-free, then the tuner over every candidate for the fused sets at 4095.
set -uo pipefail
B=build-device
P="--dtype bf16 --weight-dtype fp32 --n 4095 --align 2 --m 16388"
for s in "ln-recompute layernorm --recompute-from-output" "rms-recompute rmsnorm --recompute-from-output" "ln-none layernorm"; do
  set -- $s; name=$1 kind=$2; shift 2
  timeout 150 scripts/ncu-profile.sh $OUT/ncu $name -- $B/normjit tune --kind $kind $P "$@"
  echo "ncu $name done at $SECONDS s"
done
for s in "layernorm --recompute-from-output" "rmsnorm --recompute-from-output" "layernorm --parallel" "layernorm --fused all"; do
  set -- $s; kind=$1; shift
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 120 $B/normjit tune --kind $kind $P "$@" >> $OUT/tune.txt 2>> $OUT/tune-progress.txt
  echo "tune $s exit $? at $SECONDS s"
done
cat $OUT/tune.txt
tar czf $OUT/call1.tgz -C $OUT ncu tune.txt tune-progress.txt && rm -rf $OUT/ncu $OUT/tune-progress.txt
