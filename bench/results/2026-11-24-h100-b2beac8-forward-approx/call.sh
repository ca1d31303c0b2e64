#!/usr/bin/env bash
# Session 17, call 6 (b2beac8): streamed LayerNorm merges with the approximate reciprocal. Forward GPU
# tests; bench --forward of LayerNorm with this build and 7f95847 (v/base); exhaustive
# forward tuning of the streamed shapes (shapes.toml) with this build.
set -uo pipefail
b=build-device; o=$OUT; w=$(mktemp -d); d=bench/results/2026-11-24-h100-b2beac8-forward-approx
scripts/gpu-environment.sh $b > $o/environment.txt 2>&1
export NORMJIT_CACHE_DIR=$(mktemp -d)
timeout 200 $b/tests/normjit_gpu_tests --gtest_filter='Forward.*:ForwardFused.*:ForwardTuning.*' > $w/gpu-tests-forward.txt 2>&1
echo "forward tests rc=$? at ${SECONDS}s"; grep -hE "^\[  (FAILED|PASSED) |candidates checked" $w/gpu-tests-forward.txt | head
for v in base new; do
  bin=$b/normjit; [ $v != new ] && bin=$b/v/$v
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 150 $bin bench --forward --kinds layernorm --weights fp32 --json $w/bench-$v.json > $w/bench-$v.txt 2>&1
  echo "bench $v rc=$? at ${SECONDS}s"
done
python3 bench/compare_bench.py $w/bench-base.json $w/bench-new.json | cut -c1-130
NORMJIT_CACHE_DIR=$(mktemp -d) timeout 120 $b/normjit tune --forward --exhaustive --shapes $d/shapes.toml > $o/tune.txt 2>&1
echo "tune rc=$? at ${SECONDS}s"; grep -E "^(layernorm|rmsnorm)" $o/tune.txt | sed -E 's/ +/ /g' | cut -c1-300
for s in "N=65536 x=bf16" "N=131072 x=bf16" "N=262144 x=bf16" "N=1048576 x=bf16" "N=262144 x=fp32" "N=1048576 x=fp32"; do
  echo "== $s"; grep " fit layernorm forward $s" $o/tune.txt | sed -E 's/.*M<=[0-9]+ \| //' | sort -t'|' -k2 -n | head -4; done
tar -C $w -czf $o/run.tgz .
