#!/usr/bin/env bash
# Session 17, call 10 (b081ed8): streamed forward rows shared by a cluster on sm_90. Forward GPU
# tests (every candidate of 6 shapes, LN bf16 262144 among them; fused options up to 262144);
# exhaustive forward tuning of shapes.toml; bench --forward at N >= 32768 with this build and
# 7f95847 (v/base) in one run.
set -uo pipefail
b=build-device; o=$OUT; w=$(mktemp -d); d=bench/results/2026-11-24-h100-b081ed8-forward-streamed-clusters
scripts/gpu-environment.sh $b > $o/environment.txt 2>&1
export NORMJIT_CACHE_DIR=$(mktemp -d)
timeout 240 $b/tests/normjit_gpu_tests --gtest_filter='Forward.*:ForwardFused.*:ForwardTuning.*' > $w/gpu-tests-forward.txt 2>&1
echo "forward tests rc=$? at ${SECONDS}s"; grep -hE "^\[  (FAILED|PASSED) |candidates checked|Failure" $w/gpu-tests-forward.txt | head
NORMJIT_CACHE_DIR=$(mktemp -d) timeout 150 $b/normjit tune --forward --exhaustive --shapes $d/shapes.toml > $o/tune.txt 2>&1
echo "tune rc=$? at ${SECONDS}s"; grep -E "^(layernorm|rmsnorm)" $o/tune.txt | sed -E 's/ +/ /g; s/ weight=fp32 .weight( .bias)? align=16//' | cut -c1-260
for v in base new; do
  bin=$b/normjit; [ $v != new ] && bin=$b/v/$v
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 100 $bin bench --forward --weights fp32 --n 32768,65536,131072,262144,1048576 --json $w/bench-$v.json > $w/bench-$v.txt 2>&1
  echo "bench $v rc=$? at ${SECONDS}s"
done
python3 bench/compare_bench.py $w/bench-base.json $w/bench-new.json | cut -c1-140
tar -C $w -czf $o/run.tgz .
