#!/usr/bin/env bash
# Session 65, call 2 (H200). build-device: candidate v2 (uncommitted on d6a27c4): the fp32 rows
# past the wide blocks take clusters of 8 of 1024 threads (always: call 1's pins won at
# 672-864 threads too) with γ held, at every m. v/old: 9f8d1b8.
# 1. A/B at the m of buckets 2-128 (call 1: RMS loses at 24 and 48-64 rows, LN at 48-64, in
#    places): which buckets and N keep the streamed clusters.
# 2. The forward GPU tests on v2, with Forward.LongFp32RowsAtFewRows (new).
# 3. ncu of LayerNorm bf16 131072 forward, fp32 γ against bf16 γ (entry 78's next 2).
set -uo pipefail
B=build-device
L=$OUT/logs
mkdir -p $L/ab $L/ncu
ms=2,9,17,20,24,28,32,33,40,48,56,64,96
timeout 330 scripts/bench-ab.sh $B/v/old $B/normjit $L/ab \
  rms "--forward --graph --kinds rmsnorm --dtypes fp32 --n 200704,212992,221184,229376,237568,262144 --m $ms" \
  ln "--forward --graph --kinds layernorm --dtypes fp32 --n 167936,196608,212992,229376,237568,262144 --m $ms" \
  > $L/ab/ab.txt 2>&1
echo "ab at ${SECONDS}s"; grep -iE "median|exited|no JSON" $L/ab/ab.txt
GPU_TEST_SHARDS=16 GPU_TEST_FILTER='*Forward*' BUILD_DIR=$B OUT=$L/tests timeout 180 scripts/gpu-run.sh gpu-tests > $OUT/tests.txt 2>&1
echo "tests rc $? at ${SECONDS}s"; grep -E "^shard|FAILED" $OUT/tests.txt | head -30
for w in fp32 same; do
  timeout 100 scripts/ncu-profile.sh $L/ncu ln-bf16-w$w --kernel nj_norm_forward -- $B/normjit tune --forward \
    --kind layernorm --dtype bf16 --weight-dtype $w --n 131072 --m 512
  echo "ncu $w at ${SECONDS}s"
done
tar czf $OUT/call2.tgz -C $OUT logs && rm -rf $L
