#!/usr/bin/env bash
# Session 53, call 7 (H200). build-device = the S rule's commit plus T.diff (uncommitted:
# LayerNorm's element blocks of 192 threads, 2561-3072, 3 an SM at 96 registers; were 2 at
# 148-151); v/old = the S rule's commit's normjit. 1. A/B, bench --graph, M·N = 64 Mi, two rounds:
# LayerNorm odd 2561-3071. 2. BackwardFewGroups at 3001 with T. 3. Standing: bench --graph of
# the listed N to 8192 with the session's rules (both kinds, bf16 fp32 γ and fp16).
set -uo pipefail
B=build-device
scripts/gpu-environment.sh $B > $OUT/environment.txt 2>&1
mkdir -p $OUT/ab
scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab \
  ln192 "--graph --kinds layernorm --dtypes bf16,fp16 --weights fp32,same --n 2561,2689,2801,2945,3001,3071" > $OUT/ab.txt 2>&1
echo "ab exit $? at $SECONDS s"
GPU_TEST_SHARDS=2 GPU_TEST_FILTER='EveryN/BackwardFewGroups.*/N3001' \
  BUILD_DIR=$B OUT=$OUT timeout 60 scripts/gpu-run.sh gpu-tests > $OUT/tests-run.txt 2>&1
echo "tests exit $? at $SECONDS s"; grep -hE '^\[  (PASSED|FAILED|SKIPPED) |OK \]|Failure' $OUT/gpu-tests*.txt | head -20
NORMJIT_CACHE_DIR=$(mktemp -d) timeout 90 $B/v/old bench --graph --dtypes bf16,fp16 --weights fp32 --n 1024,2048,4096,5120,7168,8192 --json $OUT/standing.json > $OUT/standing.txt 2>&1
echo "standing exit $? at $SECONDS s"
grep -E "^(layer|rms)|median" $OUT/ab.txt | sed -E 's/threads_per_row=[0-9]+ //; s/registers //; s/shared_weights //' | cut -c1-130
tail -30 $OUT/standing.txt | cut -c1-160
tar czf $OUT/call7-logs.tgz -C $OUT ab 2>/dev/null; rm -rf $OUT/ab
