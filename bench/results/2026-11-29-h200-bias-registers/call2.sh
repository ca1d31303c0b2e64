#!/usr/bin/env bash
# Session 43, call 2 (H200): build-device = the commit of this script; build-device/v/old = call
# 1's binary (a7bf2d8: e6c6b66's rules when no hook is set).
# 1. A/B of LayerNorm's phased forward rule (four unprefetched slots at N ≈ 7163-10233) against
#    the old, bench --forward --graph, two rounds, bf16 and fp16, fp32 and 16-bit γ.
# 2. RMSNorm's phased forward with the same blocks (NORMJIT_HOOK_FWD=four-nopf) against its rule,
#    same binary, two rounds.
# 3. The forward's GPU tests.
set -uo pipefail
B=build-device
w=$OUT/ab; mkdir -p $w
timeout 300 scripts/bench-ab.sh $B/v/old $B/normjit $w \
  bf16 "--forward --graph --kinds layernorm --dtypes bf16 --weights fp32 --n 7001,7200,8191,9001,10001,10233,11001" \
  other "--forward --graph --kinds layernorm --dtypes bf16,fp16 --weights fp32,same --n 8191,10001" > $OUT/ab.txt 2>&1
echo "ab at $SECONDS s"; cut -c1-170 $OUT/ab.txt
printf '#!/bin/sh\nNORMJIT_HOOK_FWD=four-nopf exec %s/%s/normjit "$@"\n' "$PWD" $B > /tmp/rms-nopf && chmod +x /tmp/rms-nopf
w2=$OUT/rms; mkdir -p $w2
timeout 150 scripts/bench-ab.sh $B/normjit /tmp/rms-nopf $w2 \
  rms "--forward --graph --kinds rmsnorm --dtypes bf16 --weights fp32 --n 7200,8191,9001,10001" > $OUT/rms-ab.txt 2>&1
echo "rms ab at $SECONDS s"; cut -c1-170 $OUT/rms-ab.txt
GPU_TEST_SHARDS=16 GPU_TEST_FILTER='Forward*' BUILD_DIR=$B OUT=$OUT/tests timeout 200 scripts/gpu-run.sh gpu-tests > $OUT/tests.txt 2>&1
echo "tests exit $? at $SECONDS s"; tail -15 $OUT/tests.txt
tar czf $OUT/call2-logs.tgz -C $OUT ab rms tests && rm -rf $OUT/ab $OUT/rms $OUT/tests
