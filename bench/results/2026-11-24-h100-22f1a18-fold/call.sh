#!/usr/bin/env bash
# Session 16, call 3: cluster row sums folded by lanes (fold_cluster: lane r reads block r's
# sums, the warp folds them by shuffles in rank order) against 22f1a18 (v/base), which read all
# kCluster sums on every thread one after another. Every GPU test; bf16 sweep (fp32 γ) backward
# and forward, new and base in the same run; exhaustive tuning of LN 65536 and 262144.
set -uo pipefail
b=build-device; o=$OUT; w=$(mktemp -d)
export NORMJIT_CACHE_DIR=$(mktemp -d)
BUILD_DIR=$b OUT=$w GPU_TEST_SHARDS=8 timeout 260 scripts/gpu-run.sh gpu-tests > $w/gpu-run.txt 2>&1
grep -hE "^\[  (FAILED|PASSED) " $w/gpu-tests.txt | sort | uniq -c
echo "tests done at ${SECONDS}s"
for v in base new; do
  bin=$b/v/base; [ $v = new ] && bin=$b/normjit
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 100 $bin bench --dtypes bf16 --weights fp32 --graph --json $w/bench-$v.json > $w/bench-$v.txt 2>&1
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 60 $bin bench --forward --dtypes bf16 --weights fp32 --n 16384,32768,65536,131072,262144 --json $w/fwd-$v.json > $w/fwd-$v.txt 2>&1
  echo "$v done at ${SECONDS}s"
done
for n in 65536 262144; do
  timeout 70 $b/normjit tune --kind layernorm --n $n --m $((67108864 / n)) --dtype bf16 --weight-dtype fp32 --exhaustive >> $w/tune.txt 2>&1
done
echo "tune done at ${SECONDS}s"
python3 bench/compare_bench.py $w/bench-base.json $w/bench-new.json | cut -c1-110
python3 bench/compare_bench.py $w/fwd-base.json $w/fwd-new.json | cut -c1-110
python3 bench/tune_fits.py $w/tune.txt 2>&1 | tail -12
tar -C $w -czf $o/results.tgz .
