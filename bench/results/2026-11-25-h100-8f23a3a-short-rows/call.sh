#!/usr/bin/env bash
# Session 18, call 10: every GPU test (8 shards) at this commit, then bench --graph with this
# commit's heuristic (new) and 534dbb7's (old, build-device/v/old), twice, at the short and
# medium rows call 9's rules touch and their neighbours.
set -uo pipefail
b=build-device; o=$OUT; w=$(mktemp -d)
export NORMJIT_CACHE_DIR=$(mktemp -d)
BUILD_DIR=$b OUT=$w GPU_TEST_SHARDS=8 timeout 330 scripts/gpu-run.sh gpu-tests > $w/gpu-run.txt 2>&1
grep -hE "^\[  (FAILED|PASSED) " $w/gpu-tests.txt | sort | uniq -c; grep -E "^\[  FAILED" $w/gpu-tests.txt | head
grep -cE "^\[       OK \]" $w/gpu-tests.txt
echo "tests done at ${SECONDS}s"
B="--graph --weights fp32,same --dtypes bf16 --n 320,448,640,1152,1280,1536,1600,1792,1920,2048"
B16="--graph --weights fp32 --dtypes fp16 --n 320,1280,1536,1792"
F="--forward --graph --weights fp32 --dtypes bf16 --n 320,448,640,704,768,960"
for r in 1 2; do
  for s in old new; do bin=$b/normjit; [ $s = old ] && bin=$b/v/old
    NORMJIT_CACHE_DIR=$(mktemp -d) timeout 90 $bin bench $B --json $w/bwd-$s$r.json > $w/bwd-$s$r.txt 2>&1
    NORMJIT_CACHE_DIR=$(mktemp -d) timeout 60 $bin bench $B16 --json $w/b16-$s$r.json > $w/b16-$s$r.txt 2>&1
    NORMJIT_CACHE_DIR=$(mktemp -d) timeout 60 $bin bench $F --json $w/fwd-$s$r.json > $w/fwd-$s$r.txt 2>&1
  done
done
echo "benches at ${SECONDS}s"
for r in 1 2; do for t in bwd b16 fwd; do python3 bench/compare_bench.py $w/$t-old$r.json $w/$t-new$r.json | cut -c1-175; done; done
cp $w/gpu-tests.txt $w/environment.txt $o/ 2>/dev/null
tar -C $w -czf $o/results.tgz --exclude=gpu-tests.txt .
