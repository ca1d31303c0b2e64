#!/usr/bin/env bash
# Session 16, call 4 (ec78de1): 1-4 fp32 rows of 16384-32768 in clusters of 512-thread blocks.
# Every GPU test; bench --graph at fp32 16384/32768/65536, M 1-8, this build against 22f1a18
# (v/base) in the same run; exhaustive tuning at 8 and 32 rows (where the rule stops).
set -uo pipefail
b=build-device; o=$OUT; w=$(mktemp -d)
export NORMJIT_CACHE_DIR=$(mktemp -d)
BUILD_DIR=$b OUT=$w GPU_TEST_SHARDS=8 timeout 260 scripts/gpu-run.sh gpu-tests > $w/gpu-run.txt 2>&1
grep -hE "^\[  (FAILED|PASSED) " $w/gpu-tests.txt | sort | uniq -c
echo "tests done at ${SECONDS}s"
for v in base new; do
  bin=$b/v/base; [ $v = new ] && bin=$b/normjit
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 100 $bin bench --dtypes fp32 --weights fp32 --graph --n 16384,32768,65536 --m 1,2,3,4,5,8 --json $w/bench-$v.json > $w/bench-$v.txt 2>&1
  echo "$v done at ${SECONDS}s"
done
for nm in '16384 8' '16384 32' '32768 8' '32768 32'; do set -- $nm
  for k in layernorm rmsnorm; do
    [ $SECONDS -lt 540 ] && timeout 40 $b/normjit tune --kind $k --n $1 --m $2 --dtype fp32 --weight-dtype fp32 --exhaustive >> $w/tune.txt 2>&1
  done
done
echo "tune done at ${SECONDS}s"
python3 bench/compare_bench.py $w/bench-base.json $w/bench-new.json | cut -c1-120
python3 bench/tune_fits.py $w/tune.txt 2>&1 | grep -v column_pass
tar -C $w -czf $o/results.tgz .
