#!/usr/bin/env bash
# Session 17, call 1 (e5337d7): the forward's LayerNorm clusters meeting once and the
# prefetching candidates. Forward GPU tests (every candidate of 5 shapes, fused options);
# exhaustive forward tuning of the long rows (shapes.toml) with this build and with 7f95847
# (v/base: two meetings a LayerNorm cluster row, no prefetch); bench --forward both builds.
set -uo pipefail
b=build-device; o=$OUT; w=$(mktemp -d); d=bench/results/2026-11-24-h100-e5337d7-forward-clusters
scripts/gpu-environment.sh $b > $o/environment.txt 2>&1
export NORMJIT_CACHE_DIR=$(mktemp -d)
timeout 200 $b/tests/normjit_gpu_tests --gtest_filter='Forward.*:ForwardTuning.*:ForwardFused.*' > $w/gpu-tests-forward.txt 2>&1
echo "forward tests rc=$? at ${SECONDS}s"; grep -hE "^\[  (FAILED|PASSED) |candidates checked" $w/gpu-tests-forward.txt | head
for v in new base; do
  bin=$b/normjit; [ $v = base ] && bin=$b/v/base
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 170 $bin tune --forward --exhaustive --shapes $d/shapes.toml > $w/tune-$v.txt 2>&1
  echo "tune $v rc=$? at ${SECONDS}s"
done
for v in new base; do
  bin=$b/normjit; [ $v = base ] && bin=$b/v/base
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 60 $bin bench --forward --dtypes bf16,fp32 --weights fp32 --n 8192,12288,16384,32768,65536,131072,262144 --json $w/bench-$v.json > $w/bench-$v.txt 2>&1
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 60 $bin bench --forward --dtypes bf16 --weights fp32 --n 4096,32768,65536 --fused residual,dropout-bits,gate-before,parallel --json $w/fused-$v.json > $w/fused-$v.txt 2>&1
done
echo "bench done at ${SECONDS}s"
python3 bench/compare_bench.py $w/bench-base.json $w/bench-new.json | cut -c1-120
python3 bench/compare_bench.py $w/fused-base.json $w/fused-new.json | cut -c1-120 | tail -30
cp $w/tune-new.txt $w/tune-base.txt $o/
tar -C $w -czf $o/run.tgz .
