#!/usr/bin/env bash
# Session 24, call 1 (H100): build-device at 1f8183e plus an uncommitted hook (NJ_EXP_WM: warp-
# shifted moments for forward rows of more than that many threads; unset = 512 as committed);
# build-device/v/old = f1ca407's normjit.
#  1. NVRTC's own cache: the same source compiled three times, without and with --no-cache.
#  2. The NVRTC CPU tests (their spill checks now fail on a log without a report), twice, so
#     the second run meets whatever NVRTC cached in the first.
#  3. The forward GPU tests at 1f8183e (a508ecd's spill fallback, D1's helpers).
#  4. A/B, forward, LayerNorm, graph replays: f1ca407 against 1f8183e (D1), then 1f8183e
#     against warp-shifted moments from 256 and from 32 threads a row.
set -uo pipefail
B=build-device
mkdir -p $OUT
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64
{ $B/v/nvrtc_cache; $B/v/nvrtc_cache --no-cache; } > $OUT/nvrtc-cache.txt 2>&1
grep -c 'Used 8 registers' $OUT/nvrtc-cache.txt
bp=$(cd $B && pwd)
for r in 1 2; do
  for i in 0 1 2 3 4 5 6 7; do
    GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$i NORMJIT_CLI=$bp/normjit NORMJIT_LIBRARY=$bp/libnormjit.so \
      $B/tests/normjit_cpu_tests --gtest_filter='Nvrtc.*:NvrtcForward.*:*CompileSweep*' > $OUT/nvrtc-$r-$i.txt 2>&1 &
  done
  wait
  cat $OUT/nvrtc-$r-*.txt > $OUT/nvrtc-tests-$r.txt; rm $OUT/nvrtc-$r-*.txt
  echo "nvrtc tests run $r: $(grep -c '^\[       OK' $OUT/nvrtc-tests-$r.txt) ok, $(grep -c '^\[  FAILED  \] [A-Z]' $OUT/nvrtc-tests-$r.txt) failed, $(grep -c '^\[  SKIPPED \] [A-Z]' $OUT/nvrtc-tests-$r.txt) skipped"
done
GPU_TEST_SHARDS=8 GPU_TEST_FILTER='Forward*:*Forward*' BUILD_DIR=$B OUT=$OUT scripts/gpu-run.sh gpu-tests 2>&1 | tail -12
grep -E '^\[  FAILED' $OUT/gpu-tests.txt | head
w=$OUT/ab; mkdir -p $w
scripts/bench-ab.sh $B/v/old $B/normjit $w \
  d1 "--forward --graph --kinds layernorm --weights fp32 --dtypes bf16,fp32 --n 1000,1024,2049,4095,4096,5003,8192,12289,16384,24577,32768" \
  > $OUT/ab-d1.txt 2>&1
for v in wm256 wm32; do
  scripts/bench-ab.sh $B/normjit $B/v/$v $w \
    $v "--forward --graph --kinds layernorm --weights fp32 --dtypes bf16,fp32 --n 256,1000,2049,2561,3001,4095,4096,5003,6001,8191,8192" \
    > $OUT/ab-$v.txt 2>&1
done
tar -C $OUT -czf $OUT/ab.tar.gz ab && rm -rf $w
for f in $OUT/ab-*.txt; do echo "== $f"; cat $f; done
