#!/usr/bin/env bash
# Session 38, call 1 (H200): build-device/normjit = b375b3b (phased rows: 16-bit rows in phase
# but aligned to less than 16 bytes read as aligned chunks), build-device/v/old = 49b2015.
# 1) The whole GPU suite (BackwardPhasedRows new; phased shapes in BackwardDeterminism).
# 2) A/B, two rounds, bench --graph: odd 16-bit N, LN (γ, β) and RMS (γ), bf16 and fp16, fp32 γ.
set -uo pipefail
B=build-device
GPU_TEST_SHARDS=16 BUILD_DIR=$B OUT=$OUT timeout 300 scripts/gpu-run.sh gpu-tests > $OUT/gpu-run.txt 2>&1
echo "gpu suite exit $? at $SECONDS s"; grep -E "tests? (passed|failed)|PASSED|FAILED" $OUT/gpu-tests.txt | head -20
ab=$(mktemp -d)
timeout 280 scripts/bench-ab.sh $B/v/old $B/normjit $ab \
  bf16 "--graph --kinds layernorm,rmsnorm --dtypes bf16 --weights fp32 --n 1001,2001,4095,5003,8191,12289,16383,30001" \
  fp16 "--graph --kinds layernorm,rmsnorm --dtypes fp16 --weights fp32 --n 1003,4095,5003,9999" > $OUT/ab.txt 2>&1
echo "ab exit $? at $SECONDS s"
cut -c1-200 $OUT/ab.txt | grep -vE "^ *$" | head -70
cp $ab/bf16-new1.txt $OUT/bench-new-bf16.txt 2>/dev/null
tar czf $OUT/logs.tgz -C $OUT $(cd $OUT && ls gpu-run.txt gpu-tests.txt 2>/dev/null) -C $ab . 2>/dev/null
(cd $OUT && rm -f gpu-run.txt gpu-tests.txt)
