#!/usr/bin/env bash
# Session 18, call 13 (the session's last code): every GPU test (8 shards), then bench --graph
# of the shapes 15e455f narrows, this commit (new) against 157fafe (old), twice.
set -uo pipefail
b=build-device; o=$OUT; w=$(mktemp -d)
export NORMJIT_CACHE_DIR=$(mktemp -d)
BUILD_DIR=$b OUT=$w GPU_TEST_SHARDS=8 timeout 330 scripts/gpu-run.sh gpu-tests > $w/gpu-run.txt 2>&1
grep -hE "^\[  (FAILED|PASSED) " $w/gpu-tests.txt | sort | uniq -c; grep -E "^\[  FAILED" $w/gpu-tests.txt | head
grep -cE "^\[       OK \]" $w/gpu-tests.txt
echo "tests done at ${SECONDS}s"
B="--graph --weights fp32 --dtypes bf16,fp16 --kinds rmsnorm --n 2176,2304,2432,2560,2688,2944,3072"
F="--forward --graph --weights fp32 --dtypes fp32 --kinds layernorm --n 69632,81920,86016,98304,110592"
for r in 1 2; do
  for s in old new; do bin=$b/normjit; [ $s = old ] && bin=$b/v/old
    NORMJIT_CACHE_DIR=$(mktemp -d) timeout 60 $bin bench $B --json $w/bwd-$s$r.json > $w/bwd-$s$r.txt 2>&1
    NORMJIT_CACHE_DIR=$(mktemp -d) timeout 60 $bin bench $F --json $w/fwd-$s$r.json > $w/fwd-$s$r.txt 2>&1
  done
done
echo "benches at ${SECONDS}s"
for r in 1 2; do for t in bwd fwd; do python3 bench/compare_bench.py $w/$t-old$r.json $w/$t-new$r.json | cut -c1-175; done; done
cp $w/gpu-tests.txt $w/environment.txt $o/ 2>/dev/null
tar -C $w -czf $o/results.tgz --exclude=gpu-tests.txt .
