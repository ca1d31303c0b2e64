#!/usr/bin/env bash
# Session 16, call 1: where γ is read from. Three builds of the same commit's code:
# base = 22f1a18 (x and dy through L1), cg = x, dy and the fused inputs loaded with
# ld.global.cg (around L1), evl = cg plus γ/β loaded with L1::evict_last. Sweep bf16/fp32,
# fp32 γ, backward and bf16 forward, and Nsight Compute of the long-row clusters, base and cg.
set -uo pipefail
b=build-device; o=$OUT
scripts/gpu-environment.sh $b > $o/environment.txt 2>&1
for v in base cg evl; do
  bin=$b/v/$v; [ $v = cg ] && bin=$b/normjit
  export NORMJIT_CACHE_DIR=$(mktemp -d)
  timeout 200 $bin bench --dtypes bf16,fp32 --weights fp32 --graph --json $o/bench-$v.json > $o/bench-$v.txt 2>&1
  echo "$v backward done at ${SECONDS}s"
  [ $v = evl ] || { timeout 100 $bin bench --forward --dtypes bf16 --weights fp32 --json $o/fwd-$v.json > $o/fwd-$v.txt 2>&1; echo "$v forward done at ${SECONDS}s"; }
done
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
for v in base cg; do
  bin=$b/v/$v; [ $v = cg ] && bin=$b/normjit
  for nm in '65536 1024' '262144 256'; do set -- $nm
    [ $SECONDS -lt 540 ] || break
    NORMJIT_CACHE_DIR=$(mktemp -d) timeout 60 $ncu --section SpeedOfLight --section MemoryWorkloadAnalysis_Tables --section WarpStateStats -k nj_norm_backward -c 1 \
      $bin bench --kinds layernorm --dtypes bf16 --weights fp32 --n $1 --m $2 --reps 1 >> $o/ncu-$v.txt 2>&1
  done
done
echo "ncu done at ${SECONDS}s"
python3 bench/compare_bench.py $o/bench-base.json $o/bench-cg.json 2>&1 | tail -50
python3 bench/compare_bench.py $o/bench-cg.json $o/bench-evl.json 2>&1 | tail -50
python3 bench/compare_bench.py $o/fwd-base.json $o/fwd-cg.json 2>&1 | tail -30
