#!/usr/bin/env bash
# Session 18, call 8: a second scan for cliffs, at model hidden sizes of 320-13824 off the speed
# sweep: bench --graph, both passes, LN and RMS, bf16 with fp32 and bf16 γ, fp32, M·N = 64 Mi.
set -uo pipefail
b=build-device; o=$OUT; w=$(mktemp -d)
export NORMJIT_CACHE_DIR=$(mktemp -d)
N=320,640,768,1280,1536,1600,1792,2304,2816,4608,5376,6656,11008,13824
timeout 250 $b/normjit bench --graph --weights fp32,same --dtypes bf16 --n $N --json $w/bwd16.json > $w/bwd16.txt 2>&1; echo "exit $? at ${SECONDS}s"
timeout 150 $b/normjit bench --graph --weights fp32 --dtypes fp32 --n $N --json $w/bwd32.json > $w/bwd32.txt 2>&1; echo "exit $? at ${SECONDS}s"
timeout 150 $b/normjit bench --forward --graph --weights fp32 --dtypes bf16,fp32 --n $N --json $w/fwd.json > $w/fwd.txt 2>&1; echo "exit $? at ${SECONDS}s"
for f in bwd16 bwd32 fwd; do grep -E "^(layernorm|rmsnorm)" $w/$f.txt | awk '{printf "%s %s %s %s %s %s %s\n", $1,$2,$3,$5,$7,$9,$10}' | sort -k6 -n | head -16; echo; done
cp $w/* $o/
