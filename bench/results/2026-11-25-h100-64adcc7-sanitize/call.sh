#!/usr/bin/env bash
# Session 20, call 8: bf16/fp16 γ of one block an SM back on L1 (this commit) against cb73074
# (γ in shared memory there) in A/B, at 10240-16384; then memcheck and initcheck over the
# sanitize matrix (its clusters at 65536 and 262144 hold γ in shared memory).
set -uo pipefail
b=build-device; o=$OUT; w=$(mktemp -d)
scripts/bench-ab.sh $b/v/old $b/normjit $w \
  same "--graph --dtypes bf16,fp16 --weights same --n 10240,12288,14336,16384,65536" > $o/ab.txt 2>&1
echo "ab done at ${SECONDS}s"
tar -C $w -czf $o/results.tgz .
SANITIZE_TOOLS="memcheck initcheck" BUILD_DIR=$b scripts/gpu-sanitize.sh; echo "sanitize exit $? at ${SECONDS}s"
tail -4 $o/sanitize.txt
gzip -f $o/sanitize.txt
ls -la $o
