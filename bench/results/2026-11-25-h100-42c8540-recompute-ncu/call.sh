#!/usr/bin/env bash
# Session 20, call 1: recompute's dx pass without the third γ read (42c8540) against f8db1cc
# (A/B, both runs); Nsight Compute on fused kernels that sit furthest below their option-free
# row (LN recompute 5120 / 12288, LN parallel 7168, RMS gate 14336, and LN 5120 option-free to
# set them against); the fused GPU tests.
set -uo pipefail
b=build-device; o=$OUT; w=$(mktemp -d)
scripts/bench-ab.sh $b/v/old $b/normjit $w \
  rec "--graph --dtypes bf16 --weights fp32 --n 5120,7168,8192,12288,14336,16384 --fused recompute" > $o/ab.txt 2>&1
echo "ab done at ${SECONDS}s"
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
# name kind n m fused launch-skip (bench runs the option-free set first: 3 warm-ups + 1 timed)
for spec in 'ln5120-none layernorm 5120 13107 recompute 1' 'ln5120-recompute layernorm 5120 13107 recompute 5' \
            'ln12288-recompute layernorm 12288 5461 recompute 5' 'ln7168-parallel layernorm 7168 9362 parallel 5' \
            'rms14336-gate rmsnorm 14336 4681 gate 5'; do
  set -- $spec
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 120 $ncu --set full --import-source no -k nj_norm_backward --launch-skip $6 -c 1 -f -o $w/$1 \
    $b/normjit bench --kinds $2 --dtypes bf16 --weights fp32 --n $3 --m $4 --fused $5 --reps 1 > $w/$1-run.txt 2>&1
  $ncu --import $w/$1.ncu-rep --page details > $w/$1-details.txt 2>&1
  $ncu --import $w/$1.ncu-rep --page source --csv --print-source sass > $w/$1-sass.csv 2>&1
  python3 bench/ncu_stalls.py $w/$1-sass.csv --top 14 > $w/$1-stalls.txt 2>&1
  echo "$1 done at ${SECONDS}s"
done
for f in $w/*-details.txt; do echo "== $f"; grep -E "Block Size|Registers Per|DRAM Throughput|L1/TEX Hit|L2 Hit|L1/TEX Cache Throughput|L2 Cache Throughput|Achieved Occupancy|Issued Warp|No Eligible|Warp Cycles Per Issued|Duration|Mem Pipes|Shared Memory|Bank" $f | cut -c1-150 | head -30; done > $o/ncu-summary.txt
for f in $w/*-stalls.txt; do echo "== $f"; head -40 $f; done > $o/ncu-stalls.txt
GPU_TEST_SHARDS=12 GPU_TEST_FILTER='BackwardRecompute.*:BackwardFusedFamilies.*:BackwardFewGroups.*:BackwardFused*' BUILD_DIR=$b scripts/gpu-run.sh gpu-tests > $o/gpu-run.txt 2>&1; echo "gpu tests exit $?"
grep -E "^shard" $o/gpu-run.txt
gzip -f $o/gpu-tests.txt
tar -C $w --exclude='*.ncu-rep' --exclude='*-sass.csv' -czf $o/results.tgz .
ls -la $o
