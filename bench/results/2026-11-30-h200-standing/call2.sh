#!/usr/bin/env bash
# Session 55, call 2 (H200). build-device = 448e13e: the forward folds its stores' element path
# where rows are not prefetched (825f7b0); the backward's fused dx loop reads slots ahead of its
# dx stores in slots narrower than 8 (1dc41f7); the forward's dropout draws a warp together in
# slots of one or two elements (448e13e). v/old = 54065db's normjit (call 1's).
# 1. The standing sweep against call 1 (scripts/gpu-standing.sh: both passes, fused both passes).
# 2. A/B at other odd N with the fused options (bench --graph, bf16 fp32 γ and fp32).
# 3. The GPU tests of the forward and of the fused options.
set -uo pipefail
B=build-device
BENCH_TIMEOUT=250 BUILD_DIR=$B OUT=$OUT timeout 300 scripts/gpu-standing.sh bench/results/2026-11-30-h200-standing/call1
echo "standing exit $? at $SECONDS s"
mkdir -p $OUT/ab
timeout 150 scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab \
  bwd "--graph --dtypes bf16,fp32 --weights fp32 --n 1001,2050,5003,12289 --fused none,residual,all,recompute" \
  fwd "--forward --graph --dtypes bf16,fp32 --weights fp32 --n 1001,2050,5003,12289 --fused none,residual,all" > $OUT/ab.txt 2>&1
echo "ab exit $? at $SECONDS s"
for s in bwd fwd; do python3 bench/compare_bench.py $OUT/ab/$s-old2.json $OUT/ab/$s-new2.json 2>&1 | cut -c1-150; done
GPU_TEST_SHARDS=16 GPU_TEST_FILTER='ForwardFused.*:BackwardFused*:Forward.*:ForwardTuning.*' BUILD_DIR=$B OUT=$OUT timeout 200 scripts/gpu-run.sh gpu-tests > $OUT/tests-run.txt 2>&1
echo "tests exit $? at $SECONDS s"; tail -3 $OUT/tests-run.txt
grep -hE '^\[  (PASSED|FAILED|SKIPPED) ' $OUT/gpu-tests*.txt | sort | uniq -c | head; grep -h -B2 -A8 'Failure' $OUT/gpu-tests*.txt | head -40
gzip -f $OUT/gpu-tests*.txt 2>/dev/null; tar czf $OUT/call2-ab.tgz -C $OUT ab 2>/dev/null; rm -rf $OUT/ab
