#!/usr/bin/env bash
# Session 17, call 11 (da13afa): the forward's streamed rows shared by clusters when they are
# fewer than the SMs. Every GPU test (8 shards); bench --forward at N >= 32768 (M·N = 64 Mi) and
# at 1-16 rows of 65536-1M (graph replays), this build against 7f95847 (v/base) in one run.
set -uo pipefail
b=build-device; o=$OUT; w=$(mktemp -d)
scripts/gpu-environment.sh $b > $o/environment.txt 2>&1
export NORMJIT_CACHE_DIR=$(mktemp -d)
BUILD_DIR=$b OUT=$w GPU_TEST_SHARDS=8 timeout 300 scripts/gpu-run.sh gpu-tests > $w/gpu-run.txt 2>&1
grep -hE "^\[  (FAILED|PASSED) " $w/gpu-tests.txt | sort | uniq -c; grep -E "^\[  FAILED" $w/gpu-tests.txt | head
cp $w/gpu-tests.txt $o/
echo "tests done at ${SECONDS}s"
for v in base new; do
  bin=$b/normjit; [ $v != new ] && bin=$b/v/$v
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 100 $bin bench --forward --weights fp32 --n 32768,65536,131072,262144,1048576 --json $w/bench-$v.json > $w/bench-$v.txt 2>&1
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 100 $bin bench --forward --graph --dtypes bf16,fp32 --weights fp32 --n 65536,262144,1048576 --m 1,4,16 --json $w/few-$v.json > $w/few-$v.txt 2>&1
  echo "bench $v rc=$? at ${SECONDS}s"
done
python3 bench/compare_bench.py $w/bench-base.json $w/bench-new.json | cut -c1-140
python3 bench/compare_bench.py $w/few-base.json $w/few-new.json | cut -c1-140
tar -C $w -czf $o/run.tgz bench-base.json bench-new.json bench-base.txt bench-new.txt few-base.json few-new.json few-base.txt few-new.txt
