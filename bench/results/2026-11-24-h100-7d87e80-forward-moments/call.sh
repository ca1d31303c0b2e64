#!/usr/bin/env bash
# Session 17, call 3 (7d87e80): LayerNorm's forward moments merged with the approximate
# reciprocal. Forward GPU tests; bench --forward of LayerNorm with this build, 7f95847 (v/base)
# and v/batch (3a63c3e + the streamed pass 1 taking a batch of 4 slots' moments at once, one
# merge a batch: spills 24 bytes on sm_80, none on sm_90).
set -uo pipefail
b=build-device; o=$OUT; w=$(mktemp -d)
scripts/gpu-environment.sh $b > $o/environment.txt 2>&1
export NORMJIT_CACHE_DIR=$(mktemp -d)
timeout 200 $b/tests/normjit_gpu_tests --gtest_filter='Forward.*:ForwardFused.*:ForwardTuning.*' > $w/gpu-tests-forward.txt 2>&1
echo "forward tests rc=$? at ${SECONDS}s"; grep -hE "^\[  (FAILED|PASSED) |candidates checked" $w/gpu-tests-forward.txt | head
for v in base new batch; do
  bin=$b/normjit; [ $v != new ] && bin=$b/v/$v
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 100 $bin bench --forward --kinds layernorm --dtypes bf16,fp32 --weights fp32 --json $w/bench-$v.json > $w/bench-$v.txt 2>&1
  echo "bench $v rc=$? at ${SECONDS}s"
done
echo "== new against base"; python3 bench/compare_bench.py $w/bench-base.json $w/bench-new.json | cut -c1-130
echo "== batch against base"; python3 bench/compare_bench.py $w/bench-base.json $w/bench-batch.json | cut -c1-130
tar -C $w -czf $o/run.tgz .
