#!/usr/bin/env bash
# Session 50, call 2 (H200). build-device at the gate's long-row rule (gate_long_rows);
# v/old = b1cadb2's normjit (the rule before).
# 1. The gated GPU tests (with the new LongRowsInEachOfTheirClusters) and the fused ones.
# 2. A/B old -> new, bench --graph, two rounds: bf16 fp32 γ and fp16 fp16 γ, both gate orders,
#    at 32769-131072.
set -uo pipefail
B=build-device
export NORMJIT_CACHE_DIR=$(mktemp -d)
GPU_TEST_SHARDS=8 GPU_TEST_FILTER='*BackwardGated*:*BackwardFused*' BUILD_DIR=$B OUT=$OUT timeout 200 scripts/gpu-run.sh gpu-tests > $OUT/tests-run.txt 2>&1
echo "tests exit $? at $SECONDS s"
grep -E '^\[  (PASSED|FAILED|SKIPPED) |Failure' $OUT/gpu-tests.txt | sort | uniq -c | head -30
grep -A8 Failure $OUT/gpu-tests.txt | head -40
mkdir -p $OUT/ab
N1=34816,36864,40960,45056,49152,53248,57344
N2=90112,98304,106496,114688,122880,131072
scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab \
  bf16a "--graph --kinds rmsnorm --dtypes bf16 --weights fp32 --n $N1 --fused gate,gate-before" \
  bf16b "--graph --kinds rmsnorm --dtypes bf16 --weights fp32 --n $N2 --fused gate,gate-before" \
  fp16a "--graph --kinds rmsnorm --dtypes fp16 --weights same --n $N1 --fused gate,gate-before" \
  fp16b "--graph --kinds rmsnorm --dtypes fp16 --weights same --n $N2 --fused gate,gate-before" > $OUT/ab.txt 2>&1
echo "ab exit $? at $SECONDS s"; grep -E "^(layer|rms)|median" $OUT/ab.txt | grep -v " none " | sed -E 's/threads_per_row=[0-9]+ //; s/vec=8 //; s/registers //' | cut -c1-150
tar czf $OUT/call2-logs.tgz -C $OUT ab ab.txt gpu-tests.txt tests-run.txt 2>/dev/null; rm -rf $OUT/ab
