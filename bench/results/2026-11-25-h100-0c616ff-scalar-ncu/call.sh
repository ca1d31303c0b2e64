#!/usr/bin/env bash
# Session 22, call 2 (0c616ff): why 16-bit rows held an element a thread a pass at 16 slots a
# thread run 3-4x slower at 192 threads (bf16 2561, fp16 and bf16 3001: ~705 us) than at 160
# (2049: 162 us) or fp16 2561 at 192 (189 us), all without spills. Nsight Compute on v/new16
# (0c616ff with the bf16 8-a-thread rule off, so every one of these picks 16 a thread).
set -uo pipefail
b=build-device; o=$OUT; w=$(mktemp -d)
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
for spec in 'bf16-2049 bf16 2049 32752' 'bf16-2561 bf16 2561 26204' 'fp16-2561 fp16 2561 26204' 'fp16-3001 fp16 3001 22362'; do
  set -- $spec
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 120 $ncu --set full --import-source no -k nj_norm_backward --launch-skip 2 -c 1 -f -o $w/$1 \
    $b/v/new16 bench --kinds layernorm --dtypes $2 --weights fp32 --n $3 --m $4 --reps 1 > $w/$1-run.txt 2>&1
  $ncu --import $w/$1.ncu-rep --page details > $w/$1-details.txt 2>&1
  $ncu --import $w/$1.ncu-rep --page source --csv --print-source sass > $w/$1-sass.csv 2>&1
  python3 bench/ncu_stalls.py $w/$1-sass.csv --top 14 > $w/$1-stalls.txt 2>&1
  echo "$1 done at ${SECONDS}s"
done
for f in $w/*-details.txt; do echo "== $f"; grep -E "Block Size|Grid Size|Registers Per|DRAM Throughput|L1/TEX Hit|L2 Hit|L1/TEX Cache Throughput|L2 Cache Throughput|Achieved Occupancy|Theoretical Occupancy|Issued Warp|No Eligible|Warp Cycles Per Issued|Duration|Mem Pipes|Shared Memory|Bank|Executed Instructions|Local" $f | cut -c1-150 | head -40; done > $o/ncu-summary.txt
for f in $w/*-stalls.txt; do echo "== $f"; head -40 $f; done > $o/ncu-stalls.txt
cat $o/ncu-summary.txt
tar -C $w --exclude='*.ncu-rep' -czf $o/results.tgz .
