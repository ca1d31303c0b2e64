#!/usr/bin/env bash
# Session 20, call 6: γ in shared memory also where a slot's γ is 16 bytes (bf16 γ of 16-bit
# rows, fp32 γ of 4-wide slots, fp32 rows) against ffd698a (only where it spans more) in A/B.
set -uo pipefail
b=build-device; o=$OUT; w=$(mktemp -d)
scripts/bench-ab.sh $b/v/old $b/normjit $w \
  same "--graph --dtypes bf16 --weights same --n 10240,12288,14336,32768,65536,262144" \
  misc "--graph --dtypes fp16 --weights same --n 12288,65536" \
  quad "--graph --dtypes bf16 --weights fp32 --kinds layernorm --n 16384" \
  fp32 "--graph --dtypes fp32 --weights fp32 --n 20480,32768,49152,131072,262144" > $o/ab.txt 2>&1
echo "ab done at ${SECONDS}s"
tar -C $w -czf $o/results.tgz .
ls -la $o
