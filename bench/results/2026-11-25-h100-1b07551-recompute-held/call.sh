#!/usr/bin/env bash
# Session 20, call 2: recompute's packed rows holding x̂ for the dx pass (1b07551) against
# 42c8540 (call 1's change) in A/B, bf16 and fp16; exhaustive tuning of LN recompute with the
# new kernel, then bench with the tuned database against the heuristic; the GPU tests that
# cover recompute (every family, γ = 0 columns, shared sums, few row groups, special values).
set -uo pipefail
b=build-device; o=$OUT; w=$(mktemp -d)
scripts/bench-ab.sh $b/v/mid $b/normjit $w \
  rec "--graph --dtypes bf16,fp16 --weights fp32 --n 2048,5120,7168,8192,10240,12288,14336,16384 --fused recompute" > $o/ab.txt 2>&1
echo "ab done at ${SECONDS}s"
export NORMJIT_CACHE_DIR=$(mktemp -d)
for kind in layernorm rmsnorm; do for n in 5120 7168 10240 12288 14336; do
  timeout 60 $b/normjit tune --kind $kind --recompute-from-output --n $n --dtype bf16 --weight-dtype fp32 --m $(( 67108864 / n )) --exhaustive > $w/t.txt 2>&1
  cat $w/t.txt >> $w/tune-all.txt; grep -E "^(layernorm|rmsnorm) " $w/t.txt | grep -v "fit " >> $o/tune-summary.txt
done; done
echo "tune done at ${SECONDS}s"
timeout 120 $b/normjit bench --graph --dtypes bf16 --weights fp32 --n 5120,7168,10240,12288,14336 --fused recompute > $o/bench-tuned.txt 2>&1
unset NORMJIT_CACHE_DIR
echo "bench done at ${SECONDS}s"
GPU_TEST_SHARDS=12 GPU_TEST_FILTER='BackwardRecompute.*:BackwardFusedFamilies.*:BackwardSharedSums*:BackwardFewGroups*:BackwardSpecial*:BackwardDeterminism*' BUILD_DIR=$b scripts/gpu-run.sh gpu-tests > $o/gpu-run.txt 2>&1; echo "gpu tests exit $?"
grep -E "^shard" $o/gpu-run.txt
gzip -f $o/gpu-tests.txt
gzip -c $w/tune-all.txt > $w/tune-all.txt.gz; rm -f $w/tune-all.txt $w/t.txt
tar -C $w -czf $o/results.tgz .
ls -la $o
