#!/usr/bin/env bash
# Session 17, call 4 (25bda3a): streamed LayerNorm rows take a batch's moments in closed form.
# Forward GPU tests; bench --forward of LayerNorm (bf16, fp16, fp32; fp32 weights) with this
# build and 7f95847 (v/base), the same run.
set -uo pipefail
b=build-device; o=$OUT; w=$(mktemp -d)
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
tar -C $w -czf $o/run.tgz .
