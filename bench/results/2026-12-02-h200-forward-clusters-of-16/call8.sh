#!/usr/bin/env bash
# Session 63, call 8 (H200; the budget's last ~220 s). build-device: ad573d8 + fp16 widened a
# 32-bit word at a time (widen_f16_pair, templates/common.cuh; uncommitted). v/old: ad573d8.
# 1. SASS of the forward's LN fp16 1000 (call 6 had 1192 instructions, bf16 1128).
# 2. A/B old vs new, fp16 fp32 γ: forward 1000 / 4096 / 16384, backward 4096 / 16384, both kinds.
# 3. GPU tests of fp16 problems and the forward's (a subset: no time for the whole suite).
set -uo pipefail
B=build-device
mkdir -p $OUT/logs/ab
NORMJIT_NVDISASM=/usr/local/cuda/bin/nvdisasm $B/normjit emit --forward --kind layernorm --dtype fp16 --weight-dtype fp32 --n 1000 \
  --config "threads=256 threads_per_row=32 vec=8 registers min_blocks=4" --sass > $OUT/logs/sass-fp16.txt 2>&1
echo "fp16 sass: $(grep -cE '^ +/\*[0-9a-f]{4}\*/' $OUT/logs/sass-fp16.txt) instructions"
timeout 90 scripts/bench-ab.sh $B/v/old $B/normjit $OUT/logs/ab fwd "--forward --graph --dtypes fp16 --weights fp32 --n 1000,4096,16384" \
  bwd "--graph --dtypes fp16 --weights fp32 --n 4096,16384" > $OUT/logs/ab/ab.txt 2>&1
echo "ab at $SECONDS s"; grep -E "^(layernorm|rmsnorm)|median" $OUT/logs/ab/ab.txt | cut -c1-110
GPU_TEST_SHARDS=16 GPU_TEST_FILTER='*RMSNorm_f16*:*LayerNorm_f16*:Forward.*:ForwardTuning.*:*Dtype*' BUILD_DIR=$B OUT=$OUT/logs timeout 110 scripts/gpu-run.sh gpu-tests > $OUT/logs/tests-run.txt 2>&1
echo "tests exit $? at $SECONDS s"
grep -hE '^\[  (PASSED|FAILED|SKIPPED) ' $OUT/logs/gpu-tests*.txt | sort | uniq -c | head; grep -hE '^\[  FAILED  \]' $OUT/logs/gpu-tests*.txt | head; grep -c '^\[       OK \]' $OUT/logs/gpu-tests.txt
tar czf $OUT/call8.tgz -C $OUT logs && rm -rf $OUT/logs
