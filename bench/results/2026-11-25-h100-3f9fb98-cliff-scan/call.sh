#!/usr/bin/env bash
# Session 18, call 4: a scan for cliffs at sizes off the speed sweep (model hidden sizes and
# N between the sweep's powers of two): bench --graph, both passes, LN and RMS, bf16 (fp32 γ)
# and fp32, M·N = 64 Mi, the heuristic.
set -uo pipefail
b=build-device; o=$OUT; w=$(mktemp -d)
export NORMJIT_CACHE_DIR=$(mktemp -d)
N=2560,3072,3584,6144,9216,10240,18432,25600,16896,20480,24576,28672,36864,40960,49152,57344,81920,98304,163840,196608
timeout 280 $b/normjit bench --graph --weights fp32 --dtypes bf16,fp32 --n $N --json $w/bwd.json > $w/bwd.txt 2>&1; echo "backward exit $? at ${SECONDS}s"
timeout 280 $b/normjit bench --forward --graph --weights fp32 --dtypes bf16,fp32 --n $N --json $w/fwd.json > $w/fwd.txt 2>&1; echo "forward exit $? at ${SECONDS}s"
for f in bwd fwd; do grep -E "^(layernorm|rmsnorm)" $w/$f.txt | awk '{printf "%s %s %s %s %s %s\n", $1,$2,$5,$7,$9,$10}' | sort -k5 -n | head -24; echo; done
cp $w/* $o/
