#!/usr/bin/env bash
# Session 36, call 5 (H200): build-device/normjit = the commit of this script (the memory-rich
# rule for 16-bit rows aligned to 4 or 8 bytes, rich_unaligned_block_rows), build-device/v/old =
# f24bfaa (before it).
# 1) GPU tests: the memory-rich rules' configs pinned against the reference (Tuning.*).
# 2) A/B, two rounds: bf16 and fp16 rows, LN and RMS, fp32 γ, contiguous rows (N ≡ 2 mod 4:
#    4-byte aligned; N ≡ 4 mod 8: 8-byte), 4098-16382, bench --graph.
set -uo pipefail
B=build-device
GPU_TEST_SHARDS=16 GPU_TEST_FILTER='Tuning.*' \
  BUILD_DIR=$B OUT=$OUT timeout 200 scripts/gpu-run.sh gpu-tests > $OUT/gpu-subset.txt 2>&1
echo "gpu subset exit $? at $SECONDS s"; grep -E "OK \]|FAILED" $OUT/gpu-tests.txt | head -20
ab=$(mktemp -d)
ns=4098,5002,6002,7002,8002,8194,9002,10002,11002,12002,13002,14002,15002,16002,16382,8196,10004,12004,14004,16004
timeout 360 scripts/bench-ab.sh $B/v/old $B/normjit $ab \
  slots "--graph --kinds layernorm,rmsnorm --dtypes bf16,fp16 --weights fp32 --n $ns" > $OUT/ab.txt 2>&1
echo "ab exit $? at $SECONDS s"
cut -c1-200 $OUT/ab.txt | grep -vE "^ *$" | head -190
cp $ab/*.json $OUT/ 2>/dev/null
tar czf $OUT/logs.tgz -C $OUT $(cd $OUT && ls gpu-subset.txt gpu-tests.txt *.json 2>/dev/null) 2>/dev/null
(cd $OUT && rm -f gpu-subset.txt gpu-tests.txt *.json)
