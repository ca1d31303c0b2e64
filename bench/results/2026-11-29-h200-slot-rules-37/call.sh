#!/usr/bin/env bash
# Session 37, call 3 (H200): build-device/normjit = the commit of this script (the rules from
# call 2's tuning: 16-bit slots of four up to 8192, fp32 slots of two without β past 12288),
# build-device/v/old = 3970181 (before them).
# 1) GPU tests: the memory-rich rules' configs pinned against the reference (Tuning.*).
# 2) A/B, two rounds, bench --graph, fp32 γ, contiguous rows: bf16 and fp16 N ≡ 4 mod 8 (8-byte
#    aligned) 4100-8188; fp32 N ≡ 2 mod 4 12290-16382 (LayerNorm's rows there are unchanged).
set -uo pipefail
B=build-device
GPU_TEST_SHARDS=16 GPU_TEST_FILTER='Tuning.*' \
  BUILD_DIR=$B OUT=$OUT timeout 200 scripts/gpu-run.sh gpu-tests > $OUT/gpu-subset.txt 2>&1
echo "gpu subset exit $? at $SECONDS s"; grep -E "OK \]|FAILED" $OUT/gpu-tests.txt | head -20
ab=$(mktemp -d)
timeout 420 scripts/bench-ab.sh $B/v/old $B/normjit $ab \
  four "--graph --kinds layernorm,rmsnorm --dtypes bf16,fp16 --weights fp32 --n 4100,4500,5004,5500,6004,6500,7004,7500,8004,8188" \
  pairs "--graph --kinds layernorm,rmsnorm --dtypes fp32 --weights fp32 --n 12290,13002,14002,15002,16002,16382" > $OUT/ab.txt 2>&1
echo "ab exit $? at $SECONDS s"
cut -c1-200 $OUT/ab.txt | grep -vE "^ *$" | head -190
cp $ab/*.json $OUT/ 2>/dev/null
tar czf $OUT/logs.tgz -C $OUT $(cd $OUT && ls gpu-subset.txt gpu-tests.txt *.json 2>/dev/null) 2>/dev/null
(cd $OUT && rm -f gpu-subset.txt gpu-tests.txt *.json)
