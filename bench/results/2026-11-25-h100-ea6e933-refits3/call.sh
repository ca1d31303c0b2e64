#!/usr/bin/env bash
# Session 18, call 7: every GPU test (8 shards) at this commit, then bench --graph with this
# commit's heuristic (new) and 8b1aebb's (old, build-device/v/old, the session's rules before
# calls 5-6), twice, at the shapes the narrowed rules touch.
set -uo pipefail
b=build-device; o=$OUT; w=$(mktemp -d)
export NORMJIT_CACHE_DIR=$(mktemp -d)
BUILD_DIR=$b OUT=$w GPU_TEST_SHARDS=8 timeout 330 scripts/gpu-run.sh gpu-tests > $w/gpu-run.txt 2>&1
grep -hE "^\[  (FAILED|PASSED) " $w/gpu-tests.txt | sort | uniq -c; grep -E "^\[  FAILED" $w/gpu-tests.txt | head
grep -cE "^\[       OK \]" $w/gpu-tests.txt
echo "tests done at ${SECONDS}s"
B16="--graph --weights fp32 --dtypes bf16,fp16 --kinds rmsnorm --n 2304,2560,2816,3072"
B32="--graph --weights fp32 --dtypes fp32 --n 53248,57344,61440"
F32="--forward --graph --weights fp32 --dtypes fp32 --kinds layernorm --n 98304,114688,163840,196608"
for r in 1 2; do
  for s in old new; do bin=$b/normjit; [ $s = old ] && bin=$b/v/old
    NORMJIT_CACHE_DIR=$(mktemp -d) timeout 60 $bin bench $B16 --json $w/b16-$s$r.json > $w/b16-$s$r.txt 2>&1
    NORMJIT_CACHE_DIR=$(mktemp -d) timeout 60 $bin bench $B32 --json $w/b32-$s$r.json > $w/b32-$s$r.txt 2>&1
    NORMJIT_CACHE_DIR=$(mktemp -d) timeout 60 $bin bench $F32 --json $w/f32-$s$r.json > $w/f32-$s$r.txt 2>&1
  done
done
echo "benches at ${SECONDS}s"
for r in 1 2; do for t in b16 b32 f32; do python3 bench/compare_bench.py $w/$t-old$r.json $w/$t-new$r.json | cut -c1-175; done; done
cp $w/gpu-tests.txt $w/environment.txt $o/ 2>/dev/null
tar -C $w -czf $o/results.tgz --exclude=gpu-tests.txt .
