#!/usr/bin/env bash
# Session 19, call 2: every GPU test after the fused problems' rules of 1025-4095 (17a4667);
# LayerNorm's recompute at 2304-3584 back on its old config (A/B against 783236a); the fused
# sets' bench at the final rule; exhaustive tuning where fused problems there stay furthest
# from the option-free row (RMS gate after the norm 2560, LN parallel 2560, LN recompute 2560).
set -uo pipefail
b=build-device; o=$OUT
GPU_TEST_SHARDS=8 BUILD_DIR=$b scripts/gpu-run.sh gpu-tests > $o/gpu-run.txt 2>&1; echo "gpu tests exit $?"
grep -E "^shard" $o/gpu-run.txt
scripts/bench-ab.sh $b/v/old $b/normjit $o \
  rec "--graph --kinds layernorm --dtypes bf16 --weights fp32 --n 2304,2560,3072,3584 --fused recompute" > $o/ab.txt 2>&1
NORMJIT_CACHE_DIR=$(mktemp -d) timeout 150 $b/normjit bench --graph --dtypes bf16,fp16 --weights fp32 \
  --n 1280,1536,2304,2560,3072 --fused residual,all,gate,gate-before,parallel,recompute --json $o/bench-fused.json > $o/bench-fused.txt 2>&1
echo "fused bench exit $?"
export NORMJIT_CACHE_DIR=$(mktemp -d)
for a in "--kind rmsnorm --gate after-norm" "--kind layernorm --parallel" "--kind layernorm --recompute-from-output"; do
  timeout 150 $b/normjit tune $a --n 2560 --dtype bf16 --weight-dtype fp32 --m 26214 --exhaustive >> $o/tune.txt 2>&1
  echo "tune [$a] exit $?"
done
gzip -f $o/gpu-tests.txt
cd $o && tar czf results.tgz *.json rec-*.txt && rm -f *.json rec-*.txt
