#!/usr/bin/env bash
# Session 16, call 9: RMSNorm's 16-bit rows of 2049-4096 at 32 elements a thread. Every GPU
# test; bench --graph of RMS 4096 (and 3072, 4095) in bf16/fp16 with both weight dtypes, this
# build against 22f1a18 (v/base) in the same run, twice each (order swapped).
set -uo pipefail
b=build-device; o=$OUT; w=$(mktemp -d)
export NORMJIT_CACHE_DIR=$(mktemp -d)
for v in base new new2 base2; do
  bin=$b/v/base; case $v in new*) bin=$b/normjit;; esac
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 60 $bin bench --graph --kinds rmsnorm --dtypes bf16,fp16 --n 3072,4096 --json $w/rms-$v.json > $w/rms-$v.txt 2>&1
done
python3 bench/compare_bench.py $w/rms-base.json $w/rms-new.json | cut -c1-110
python3 bench/compare_bench.py $w/rms-base2.json $w/rms-new2.json | cut -c1-110
echo "bench done at ${SECONDS}s"
BUILD_DIR=$b OUT=$w GPU_TEST_SHARDS=8 timeout 260 scripts/gpu-run.sh gpu-tests > $w/gpu-run.txt 2>&1
grep -hE "^\[  (FAILED|PASSED) " $w/gpu-tests.txt | sort | uniq -c; grep -E "^\[  FAILED" $w/gpu-tests.txt | head
echo "tests done at ${SECONDS}s"
tar -C $w -czf $o/results.tgz .
