#!/usr/bin/env bash
# Session 20, call 3: LayerNorm's recompute at 4097-16384 back on the option-free configs
# (4a91695) against 1b07551 (the same kernel, the pair-of-blocks rule) in A/B; exhaustive
# tuning of LN recompute at 2049-4095, where its own rule (8 elements a thread in registers)
# was fitted to the kernel before 42c8540, then bench with the tuned database against the
# heuristic; every GPU test.
set -uo pipefail
b=build-device; o=$OUT; w=$(mktemp -d)
scripts/bench-ab.sh $b/v/old $b/normjit $w \
  rec "--graph --kinds layernorm --dtypes bf16,fp16 --weights fp32 --n 4608,5120,6144,7168,10240,12288,14336 --fused recompute" > $o/ab.txt 2>&1
echo "ab done at ${SECONDS}s"
export NORMJIT_CACHE_DIR=$(mktemp -d)
for d in bf16 fp16; do for n in 2304 2560 3072 3584 4000; do
  timeout 60 $b/normjit tune --kind layernorm --recompute-from-output --n $n --dtype $d --weight-dtype fp32 --m $(( 67108864 / n )) --exhaustive > $w/t.txt 2>&1
  cat $w/t.txt >> $w/tune-all.txt; grep -E "^(layernorm|rmsnorm) " $w/t.txt | grep -v "fit " >> $o/tune-summary.txt
done; done
echo "tune done at ${SECONDS}s"
timeout 120 $b/normjit bench --graph --kinds layernorm --dtypes bf16,fp16 --weights fp32 --n 2304,2560,3072,3584,4000 --fused recompute > $o/bench-tuned.txt 2>&1
unset NORMJIT_CACHE_DIR
NORMJIT_CACHE_DIR=$(mktemp -d) timeout 120 $b/normjit bench --graph --kinds layernorm --dtypes bf16,fp16 --weights fp32 --n 2304,2560,3072,3584,4000 --fused recompute > $o/bench-heuristic.txt 2>&1
echo "bench done at ${SECONDS}s"
GPU_TEST_SHARDS=12 BUILD_DIR=$b scripts/gpu-run.sh gpu-tests > $o/gpu-run.txt 2>&1; echo "gpu tests exit $?"
grep -E "^shard" $o/gpu-run.txt
gzip -f $o/gpu-tests.txt
gzip -c $w/tune-all.txt > $w/tune-all.txt.gz; rm -f $w/tune-all.txt $w/t.txt
tar -C $w -czf $o/results.tgz .
ls -la $o
