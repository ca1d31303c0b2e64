#!/usr/bin/env bash
# Session 12, call 1: what session 11 could not run on a GPU — the C ABI guard (CApi*, embed_c,
# the Python package through it), dx written over x or dy (BackwardFusedFamilies.*) — and the
# tuner's GPU tests (Tuning*, ForwardTuning*) after this session's search-space prune and
# final-repetition change.
set -uo pipefail
b=build-device; o=$OUT
export NORMJIT_CACHE_DIR=$(mktemp -d)
scripts/gpu-environment.sh $b > $o/environment.txt 2>&1
pids=()
for i in 0 1 2 3; do
  GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$i timeout 300 $b/tests/normjit_gpu_tests \
    --gtest_filter='CApi*:BackwardFusedFamilies.*:Tuning*:ForwardTuning*:*Tuner*' > $o/shard$i.txt 2>&1 &
  pids+=($!)
done
BUILD_DIR=$b OUT=$o timeout 200 examples/embed_c/run-on-gpu.sh > /dev/null 2>&1; echo "embed_c exit $?" >> $o/embed_c.txt
for p in "${pids[@]}"; do wait $p; done
for i in 0 1 2 3; do echo "== shard $i"; cat $o/shard$i.txt; done > $o/gpu-tests.txt; rm -f $o/shard*.txt
BUILD_DIR=$b OUT=$o timeout 330 scripts/gpu-python.sh > /dev/null 2>&1; echo "gpu-python exit $?" >> $o/python.txt
grep -E "^\[  (FAILED|PASSED) |^== shard|Failure" $o/gpu-tests.txt | head -40; tail -3 $o/embed_c.txt
grep -E "^python:|curves|ms/step|gpu-python|NOT met|met \(" $o/python.txt | head -20
