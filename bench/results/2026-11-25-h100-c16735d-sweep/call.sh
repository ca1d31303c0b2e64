#!/usr/bin/env bash
# Session 22, call 4: unguarded element loads where ptxas serialized the guarded ones, bf16
# scalar rows back at 16 a thread (this commit) against 0c616ff (v/old: row pointers held,
# guarded loads everywhere, the bf16 8-a-thread rule); then the speed sweep of both passes
# (bench --graph, every dtype and weight dtype, M·N = 64 Mi) and the GPU tests of rows
# aligned to less.
set -uo pipefail
b=build-device; o=$OUT; w=$(mktemp -d)
scripts/gpu-environment.sh $b > $o/environment.txt 2>&1
scripts/bench-ab.sh $b/v/old $b/normjit $w \
  s16 "--graph --weights fp32 --dtypes bf16,fp16 --n 2049,2561,3001,3301,3585" > $o/ab.txt 2>&1
echo "ab done at ${SECONDS}s"; cat $o/ab.txt
(cd $w && tar -czf $o/results.tgz s16-*)
export NORMJIT_CACHE_DIR=$(mktemp -d)
timeout 200 $b/normjit bench --graph --json $o/bench.json > $o/bench.txt 2>&1; echo "backward bench exit $? at ${SECONDS}s"
timeout 160 $b/normjit bench --forward --graph --json $o/bench-forward.json > $o/bench-forward.txt 2>&1; echo "forward bench exit $? at ${SECONDS}s"
GPU_TEST_SHARDS=12 GPU_TEST_FILTER='BackwardMisalignedPointers.*:*Misaligned*:Tuning.*:*BackwardMatrix*:BackwardFewGroups.*:*Strided*' \
  BUILD_DIR=$b timeout $((590 - SECONDS)) scripts/gpu-run.sh gpu-tests > $o/gpu-run.txt 2>&1; echo "gpu tests exit $? at ${SECONDS}s"
grep -E "^shard|FAILED" $o/gpu-run.txt | head -30
gzip -f $o/gpu-tests.txt
