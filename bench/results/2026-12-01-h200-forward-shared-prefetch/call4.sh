#!/usr/bin/env bash
# Session 62, call 4 (H200). build-device: 3b5ea1a (the forward's 1024-thread clusters copy the next
# row ahead into shared memory, γ held). v/old: c7e1fad (call 3's build, before that rule).
# 1. GPU tests: the forward's rule configs (MemoryRichPrefetchingRows, RowsCopiedAhead, HeldWeights)
#    and Forward.*.
# 2. A/B old vs new: bench --forward --graph at 65536, 131072, 262144, both kinds, both γ types,
#    bf16 and fp16 (and 32768, 98304 as controls).
# 3. Short 16-bit rows with fused options (backward): call 3's tuning put parallel norms at 1024
#    in warp rows (218 registers, two blocks an SM) 1.9-2.1x off one row a block of N/8 threads.
#    Both pinned at bench's M for the fused sets, 512-1024; and fp16 parallel 2048 in shared sums.
set -uo pipefail
B=build-device
mkdir -p $OUT/logs/ab
GPU_TEST_SHARDS=6 GPU_TEST_FILTER='Forward.*:ForwardTuning.MemoryRich*:ForwardTuning.RowsCopiedAhead*:ForwardTuning.HeldWeights*' BUILD_DIR=$B OUT=$OUT/logs timeout 150 scripts/gpu-run.sh gpu-tests > $OUT/logs/tests-run.txt 2>&1
echo "tests exit $? at $SECONDS s"
grep -hE '^\[  (PASSED|FAILED|SKIPPED) ' $OUT/logs/gpu-tests*.txt | sort | uniq -c | head; grep -hE '^\[  FAILED  \]' $OUT/logs/gpu-tests*.txt | head; grep -h -B2 -A8 'Failure' $OUT/logs/gpu-tests*.txt | head -30
scripts/bench-ab.sh $B/v/old $B/normjit $OUT/logs/ab fwd "--forward --graph --n 32768,65536,98304,131072,262144 --dtypes bf16,fp16" > $OUT/logs/ab/ab.txt 2>&1
echo "ab at $SECONDS s"
for s in fwd; do for r in 1 2; do python3 bench/compare_bench.py $OUT/logs/ab/$s-old$r.json $OUT/logs/ab/$s-new$r.json > $OUT/logs/ab/$s-cmp$r.txt 2>&1; done
  paste -d'|' <(grep -E "^(layernorm|rmsnorm)" $OUT/logs/ab/$s-cmp1.txt | cut -d'|' -f1-2) <(grep -E "^(layernorm|rmsnorm)" $OUT/logs/ab/$s-cmp2.txt | cut -d'|' -f2,4 | cut -c1-70); tail -1 $OUT/logs/ab/$s-cmp1.txt; tail -1 $OUT/logs/ab/$s-cmp2.txt; done
short() {  # name n config...
  local name=$1 n=$2; shift 2
  local args=()
  for c in "$@"; do args+=(--config "$c"); done
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 100 $B/normjit bench --graph --dtypes bf16 --weights fp32 --n $n --fused none,parallel,gate,recompute,residual "${args[@]}" --json $OUT/logs/$name.json > $OUT/logs/$name.txt 2>&1
  echo "$name exit $? at $SECONDS s"; grep -E "^(rms|layer)" $OUT/logs/$name.txt | sed 's/  */ /g' | cut -d' ' -f1,5-7,10-24 | cut -c1-170
}
short short-512 512 "threads=128 threads_per_row=64 vec=4 registers"
short short-768 768 "threads=96 threads_per_row=96 vec=4 registers" "threads=192 threads_per_row=96 vec=4 registers"
short short-1024 1024 "threads=128 threads_per_row=128 vec=4 registers"
NORMJIT_CACHE_DIR=$(mktemp -d) timeout 100 $B/normjit bench --graph --dtypes bf16,fp16 --weights fp32 --n 2048 --fused parallel --config "threads=256 threads_per_row=256 vec=4 registers min_blocks=4 shared_sums" --json $OUT/logs/par-2048.json > $OUT/logs/par-2048.txt 2>&1
echo "par-2048 exit $? at $SECONDS s"; grep -E "^(rms|layer)" $OUT/logs/par-2048.txt | sed 's/  */ /g' | cut -d' ' -f1-2,5-7,10-24 | cut -c1-170
tar czf $OUT/call4.tgz -C $OUT logs && rm -rf $OUT/logs
