#!/usr/bin/env bash
# Session 14, call 6: parallel norms' packed rows holding dy1 (kHoldsSecondDy) against the code
# before (build-device-old: the normjit command of 1b57ad1's templates): exhaustive tuning of
# parallel LayerNorm and RMSNorm at 4096/8192/32768, bf16 and fp16, fp32 γ; then the GPU tests
# of parallel norms, the gate and shared sums (8 shards), and memcheck over both.
set -uo pipefail
o=$OUT
scripts/gpu-environment.sh build-device > $o/environment.txt 2>&1
export NORMJIT_CACHE_DIR=$(mktemp -d)
for v in old new; do
  b=build-device; [ $v = old ] && b=build-device-old
  timeout 110 bash -c "
    for nm in '4096 16384' '8192 8192' '32768 2048'; do
      set -- \$nm
      for dt in bf16 fp16; do for k in layernorm rmsnorm; do
        $b/normjit tune --kind \$k --n \$1 --m \$2 --dtype \$dt --weight-dtype fp32 --parallel --exhaustive
      done; done
    done" > $o/tune-$v.txt 2>/dev/null
  echo "tune $v exit $?" >> $o/tune-$v.txt
done
grep -hE "^(layer|rms)" $o/tune-old.txt $o/tune-new.txt | awk '{for(i=1;i<=NF;i++) if ($i ~ /^M<=/) print $1,$2,$3,$(i+2),$(i+3),$(i+5)}'
pids=()
for i in 0 1 2 3 4 5 6 7; do
  GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$i timeout 240 build-device/tests/normjit_gpu_tests --gtest_filter='*Parallel*:*Gated*:*SharedSums*' > $o/shard$i.txt 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait $p; done
for i in 0 1 2 3 4 5 6 7; do echo "== shard $i"; cat $o/shard$i.txt; done > $o/gpu-tests.txt; rm -f $o/shard*.txt
grep -E "^\[  (FAILED|PASSED) |^\[  FAILED" $o/gpu-tests.txt
NORMJIT_TEST_MATRIX=sanitize timeout $((590 - SECONDS)) $(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer) --tool memcheck --error-exitcode 9 build-device/tests/normjit_gpu_tests --gtest_filter='*BackwardGated*:*BackwardParallel*' > $o/memcheck.txt 2>&1
echo "memcheck exit $? at ${SECONDS}s" >> $o/memcheck.txt; tail -3 $o/memcheck.txt
