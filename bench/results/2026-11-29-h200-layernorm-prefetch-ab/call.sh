#!/usr/bin/env bash
# Session 37, call 5 (H200): build-device/normjit = the commit of this script (LayerNorm's
# prefetching blocks at 1024-4096 and 6145-8192 on memory-rich devices), build-device/v/old =
# 086a679 (before them).
# 1) GPU tests: the backward's dtype matrix and determinism with the heuristic's configs, Tuning.*.
# 2) A/B, two rounds, bench --graph: LayerNorm, bf16 and fp16 with fp32 γ, bf16 with bf16 γ, the
#    rule's N in 512-column steps and 5120/6144 as controls.
set -uo pipefail
B=build-device
GPU_TEST_SHARDS=16 GPU_TEST_FILTER='*BackwardMatrix*:BackwardDeterminism*:Tuning.*' \
  BUILD_DIR=$B OUT=$OUT timeout 240 scripts/gpu-run.sh gpu-tests > $OUT/gpu-subset.txt 2>&1
echo "gpu subset exit $? at $SECONDS s"; grep -E "PASSED|FAILED" $OUT/gpu-subset.txt | sort | uniq -c | head -20
ab=$(mktemp -d)
ns=1024,1536,2048,2560,3072,3584,4096,5120,6144,6656,7168,7680,8192
timeout 420 scripts/bench-ab.sh $B/v/old $B/normjit $ab \
  f32g "--graph --kinds layernorm --dtypes bf16,fp16 --weights fp32 --n $ns" \
  samew "--graph --kinds layernorm --dtypes bf16 --weights same --n $ns" > $OUT/ab.txt 2>&1
echo "ab exit $? at $SECONDS s"
cut -c1-200 $OUT/ab.txt | grep -vE "^ *$" | head -190
cp $ab/*.json $OUT/ 2>/dev/null
tar czf $OUT/logs.tgz -C $OUT $(cd $OUT && ls gpu-subset.txt gpu-tests.txt *.json 2>/dev/null) 2>/dev/null
(cd $OUT && rm -f gpu-subset.txt gpu-tests.txt *.json)
