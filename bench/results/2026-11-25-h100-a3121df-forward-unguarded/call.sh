#!/usr/bin/env bash
# Session 22, call 5 (working tree on the commit named, plus an experiment hook not committed:
# NJ_EXP_FWD=1 defines NJ_UNGUARDED_ELEMENT_LOADS in every forward kernel of slots of one
# element): do forward rows of an element gain from loads without a branch, as the backward's
# did at 161-255 threads? The same binary with (v/exp) and without the hook.
set -uo pipefail
b=build-device; o=$OUT; w=$(mktemp -d)
scripts/bench-ab.sh $b/normjit $b/v/exp $w \
  f16 "--forward --graph --weights fp32 --dtypes bf16,fp16 --n 1001,2049,3001,4095,5003,6001,8191,12289,16385,24577" \
  f32 "--forward --graph --weights fp32 --dtypes fp32 --n 1001,3001,5003,8191,12289" > $o/ab.txt 2>&1
echo "ab done at ${SECONDS}s"; cat $o/ab.txt
(cd $w && tar -czf $o/results.tgz f16-*.json f32-*.json)
