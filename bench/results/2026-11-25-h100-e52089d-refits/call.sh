#!/usr/bin/env bash
# Session 18, call 3: every GPU test (8 shards) at this commit, then bench --graph of the refitted
# shapes with this commit's heuristic (new) and c4e1df7's (old, build-device/v/old), twice:
# the forward's streamed LayerNorm rows (bf16 13 N, fp16 3 N) and the backward's fp32 rows of
# 16384-65536.
set -uo pipefail
b=build-device; o=$OUT; w=$(mktemp -d)
export NORMJIT_CACHE_DIR=$(mktemp -d)
BUILD_DIR=$b OUT=$w GPU_TEST_SHARDS=8 timeout 330 scripts/gpu-run.sh gpu-tests > $w/gpu-run.txt 2>&1
grep -hE "^\[  (FAILED|PASSED) " $w/gpu-tests.txt | sort | uniq -c; grep -E "^\[  FAILED" $w/gpu-tests.txt | head
grep -E "forward candidates checked" $w/gpu-tests.txt
echo "tests done at ${SECONDS}s"
F="--forward --graph --kinds layernorm --weights fp32 --dtypes bf16 --n 33792,36864,40960,45056,49152,57344,65536,81920,98304,131072,196608,262144,524288"
F16="--forward --graph --kinds layernorm --weights fp32 --dtypes fp16 --n 36864,49152,57344,131072"
B="--graph --weights fp32 --dtypes fp32 --n 16384,16896,20480,24576,28672,32768,65536"
for r in 1 2; do
  for s in old new; do bin=$b/normjit; [ $s = old ] && bin=$b/v/old
    NORMJIT_CACHE_DIR=$(mktemp -d) timeout 60 $bin bench $F --json $w/fwd-$s$r.json > $w/fwd-$s$r.txt 2>&1
    NORMJIT_CACHE_DIR=$(mktemp -d) timeout 60 $bin bench $F16 --json $w/fwd16-$s$r.json > $w/fwd16-$s$r.txt 2>&1
    NORMJIT_CACHE_DIR=$(mktemp -d) timeout 60 $bin bench $B --json $w/bwd-$s$r.json > $w/bwd-$s$r.txt 2>&1
  done
done
echo "benches at ${SECONDS}s"
for r in 1 2; do for t in fwd fwd16 bwd; do python3 bench/compare_bench.py $w/$t-old$r.json $w/$t-new$r.json | cut -c1-190; done; done
cp $w/gpu-tests.txt $w/environment.txt $o/ 2>/dev/null
tar -C $w -czf $o/results.tgz --exclude=gpu-tests.txt .
