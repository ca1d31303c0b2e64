#!/usr/bin/env bash
# Session 63, call 3 (H200). build-device: the forward rules of this session (uncommitted on
# 2771f42): fp32 rows past the wide blocks in clusters of 8 of up to 1024 threads with γ held
# (from m's bucket 128); RMSNorm's fp32 register clusters with γ held; LayerNorm's 16-bit warp
# rows with a part-empty last pass bound to 64 registers. v/old: 2771f42.
# 1. A/B old vs new, bench --forward --graph, two rounds: RMSNorm fp32 40960-196608 (γ held);
#    LayerNorm 16-bit warp rows 264-1016 (part-empty last passes) and 1024 (the control).
# 2. The standing sweep of both passes against session 62's (standing/).
set -uo pipefail
B=build-device
mkdir -p $OUT/logs/ab
scripts/bench-ab.sh $B/v/old $B/normjit $OUT/logs/ab rms32 "--forward --graph --kinds rmsnorm --dtypes fp32 --n 40960,49152,65536,81920,98304,114688,131072,163840,196608" \
  warp "--forward --graph --kinds layernorm --dtypes bf16,fp16 --n 264,392,456,600,744,904,1000,1016,1024" > $OUT/logs/ab/ab.txt 2>&1
echo "ab at $SECONDS s"
for s in rms32 warp; do for r in 1 2; do python3 bench/compare_bench.py $OUT/logs/ab/$s-old$r.json $OUT/logs/ab/$s-new$r.json > $OUT/logs/ab/$s-cmp$r.txt 2>&1; done
  paste -d'|' <(grep -E "^(layernorm|rmsnorm)" $OUT/logs/ab/$s-cmp1.txt | cut -d'|' -f1-2) <(grep -E "^(layernorm|rmsnorm)" $OUT/logs/ab/$s-cmp2.txt | cut -d'|' -f2,4 | cut -c1-70); tail -1 $OUT/logs/ab/$s-cmp1.txt; tail -1 $OUT/logs/ab/$s-cmp2.txt; done
tar czf $OUT/call3-ab.tgz -C $OUT logs
BENCH_TIMEOUT=200 BUILD_DIR=$B OUT=$OUT/standing timeout 330 scripts/gpu-standing.sh bench/results/2026-12-01-h200-forward-shared-prefetch/standing
echo "standing exit $? at $SECONDS s"
cat $OUT/standing/standing-check.txt 2>/dev/null | tail -40
tar czf $OUT/call3.tgz -C $OUT logs standing && rm -rf $OUT/logs $OUT/standing $OUT/call3-ab.tgz
