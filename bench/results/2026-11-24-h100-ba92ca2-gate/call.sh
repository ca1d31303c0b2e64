#!/usr/bin/env bash
# Session 14, call 5 (the gate's refitted heuristic): the fused bandwidth at 4096/8192/32768
# (bf16, fp16, fp32 γ), exhaustive tuning of the gated problems (heuristic vs best), the GPU
# tests of the gate, shared sums, few groups and fused options (8 shards), then memcheck over
# the gated tests.
set -uo pipefail
b=build-device; o=$OUT
scripts/gpu-environment.sh $b > $o/environment.txt 2>&1
export NORMJIT_CACHE_DIR=$(mktemp -d)
timeout 110 $b/normjit bench --dtypes bf16,fp16 --weights fp32 --n 4096,8192,32768 --fused none,residual,all,parallel,gate,gate-before,recompute --json $o/bench-fused.json > $o/bench-fused.txt 2>&1; echo "fused bench exit $?" >> $o/bench-fused.txt
grep -E " (none|gate|gate-before) " $o/bench-fused.txt | grep rmsnorm | cut -c1-40,95-135,150-
timeout 90 bash -c "
  for nm in '4096 16384' '8192 8192' '32768 2048'; do
    set -- \$nm
    for dt in bf16 fp16; do for g in after-norm before-norm; do
      $b/normjit tune --kind rmsnorm --n \$1 --m \$2 --dtype \$dt --weight-dtype fp32 --gate \$g --exhaustive
    done; done
  done" > $o/tune.txt 2>/dev/null
echo "tune exit $?" >> $o/tune.txt
grep -E "^rmsnorm" $o/tune.txt | cut -c1-110
pids=()
for i in 0 1 2 3 4 5 6 7; do
  GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$i timeout 240 $b/tests/normjit_gpu_tests --gtest_filter='*Gated*:*SharedSums*:*FewGroups*:*Fused*' > $o/shard$i.txt 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait $p; done
for i in 0 1 2 3 4 5 6 7; do echo "== shard $i"; cat $o/shard$i.txt; done > $o/gpu-tests.txt; rm -f $o/shard*.txt
grep -E "^\[  (FAILED|PASSED) |^\[  FAILED" $o/gpu-tests.txt
NORMJIT_TEST_MATRIX=sanitize timeout $((590 - SECONDS)) $(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer) --tool memcheck --error-exitcode 9 $b/tests/normjit_gpu_tests --gtest_filter='*BackwardGated*' > $o/memcheck-gated.txt 2>&1
echo "memcheck exit $? at ${SECONDS}s" >> $o/memcheck-gated.txt; tail -3 $o/memcheck-gated.txt
