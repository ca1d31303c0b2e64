#!/usr/bin/env bash
# Session 63, call 2 (H200). build-device: the rule of fp32 rows past the wide blocks (clusters
# of 8 of up to 1024 threads, 128 bytes a thread, γ held; uncommitted on 2771f42). v/old: 2771f42.
# 1. GPU tests: the forward's (Forward.*, ForwardTuning.*).
# 2. A/B old vs new: bench --forward --graph, fp32, 131072-262144 at M = 64 Mi / N, then 229376
#    and 262144 at M = 16, 32, 64 (the rule from m's bucket 32).
# 3. Pinned (bench --forward --graph --config): LayerNorm's warp rows of 16-bit x bounded to 64
#    registers (fp16 1000 at 70-72 registers ran 67% against bf16's 87% at 64), N where ptxas
#    gives fp16 70 (904, 1000, 1016) or bf16 72 (392), 1024 as the control; and RMSNorm fp32
#    98304-131072 in clusters of 1024 copying ahead (call 1: 131072 1.06x).
set -uo pipefail
B=build-device
mkdir -p $OUT/logs/ab
GPU_TEST_SHARDS=12 GPU_TEST_FILTER='Forward.*:ForwardTuning.*' BUILD_DIR=$B OUT=$OUT/logs timeout 170 scripts/gpu-run.sh gpu-tests > $OUT/logs/tests-run.txt 2>&1
echo "tests exit $? at $SECONDS s"
grep -hE '^\[  (PASSED|FAILED|SKIPPED) ' $OUT/logs/gpu-tests*.txt | sort | uniq -c | head; grep -hE '^\[  FAILED  \]' $OUT/logs/gpu-tests*.txt | head; grep -h -B2 -A8 'Failure' $OUT/logs/gpu-tests*.txt | head -30
scripts/bench-ab.sh $B/v/old $B/normjit $OUT/logs/ab fp32 "--forward --graph --dtypes fp32 --n 131072,163840,196608,229376,262144" > $OUT/logs/ab/ab.txt 2>&1
scripts/bench-ab.sh $B/v/old $B/normjit $OUT/logs/ab fewrows "--forward --graph --dtypes fp32 --n 229376,262144 --m 16,32,64" >> $OUT/logs/ab/ab.txt 2>&1
echo "ab at $SECONDS s"
for s in fp32 fewrows; do for r in 1 2; do python3 bench/compare_bench.py $OUT/logs/ab/$s-old$r.json $OUT/logs/ab/$s-new$r.json > $OUT/logs/ab/$s-cmp$r.txt 2>&1; done
  paste -d'|' <(grep -E "^(layernorm|rmsnorm)" $OUT/logs/ab/$s-cmp1.txt | cut -d'|' -f1-2) <(grep -E "^(layernorm|rmsnorm)" $OUT/logs/ab/$s-cmp2.txt | cut -d'|' -f2,4 | cut -c1-70); tail -1 $OUT/logs/ab/$s-cmp1.txt; tail -1 $OUT/logs/ab/$s-cmp2.txt; done
pin() {  # name bench-args configs...
  local name=$1 args=$2; shift 2
  local cfg=()
  for c in "$@"; do cfg+=(--config "$c"); done
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 150 $B/normjit bench --forward --graph $args "${cfg[@]}" --json $OUT/logs/$name.json > $OUT/logs/$name.txt 2>&1
  echo "$name exit $? at $SECONDS s"; grep -E "^(rms|layer)" $OUT/logs/$name.txt | sed 's/  */ /g' | cut -d' ' -f1-2,5,7-9,10-26 | cut -c1-170
}
pin warp-rows "--kinds layernorm --dtypes fp16,bf16 --weights fp32 --n 392,904,1000,1016,1024" \
  "threads=256 threads_per_row=32 vec=8 registers min_blocks=4"
pin rms-fp32 "--kinds rmsnorm --dtypes fp32 --n 98304,131072" \
  "threads=1024 threads_per_row=1024 vec=4 registers cluster=8 shared_prefetch=1 shared_weights" \
  "threads=512 threads_per_row=512 vec=4 registers cluster=8 min_blocks=2 shared_weights"
tar czf $OUT/call2.tgz -C $OUT logs && rm -rf $OUT/logs
