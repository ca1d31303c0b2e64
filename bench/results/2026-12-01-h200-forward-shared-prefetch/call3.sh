#!/usr/bin/env bash
# Session 62, call 3 (H200). build-device: the forward's rows copied ahead into shared memory
# (shared_prefetch = 1, pinned only), RMSNorm's forward clusters of 8 between the powers of two,
# LayerNorm's recompute at 4096 in shared sums (H200). v/old: fe04b29 (bench --config, before
# the two rules).
# 1. GPU tests: the forward (with the new RowsCopiedAheadMatchTheReference) and the recompute.
# 2. A/B old vs new of the two rules, bench --graph.
# 3. Rows copied ahead, pinned at bench's M beside the heuristic: LayerNorm's long 16-bit rows
#    with fp32 γ (held γ), RMSNorm's and 16-bit γ's (prefetching into registers today).
# 4. Exhaustive tuning of fp16 and bf16 parallel norms at 1024-1536 (call 2: fp16 2048 ran
#    1.48-1.65x off the best in the heuristic's 128-thread blocks, bf16 at its best there).
set -uo pipefail
B=build-device
mkdir -p $OUT/logs/ab
GPU_TEST_SHARDS=8 GPU_TEST_FILTER='Forward*:ForwardTuning.*:*ForwardFused*:*Recompute*' BUILD_DIR=$B OUT=$OUT/logs timeout 300 scripts/gpu-run.sh gpu-tests > $OUT/logs/tests-run.txt 2>&1
echo "tests exit $? at $SECONDS s"
grep -hE '^\[  (PASSED|FAILED|SKIPPED) ' $OUT/logs/gpu-tests*.txt | sort | uniq -c | head; grep -hE '^\[  FAILED  \]' $OUT/logs/gpu-tests*.txt | head; grep -h -B2 -A8 'Failure' $OUT/logs/gpu-tests*.txt | head -30
sp() {  # kind weights: bench --forward with rows copied ahead beside the heuristic
  local kind=$1 w=$2 args=()
  for c in 2 4 8; do
    args+=(--config "threads=1024 threads_per_row=1024 vec=8 registers cluster=$c shared_prefetch=1")
    args+=(--config "threads=1024 threads_per_row=1024 vec=8 registers cluster=$c shared_weights shared_prefetch=1")
  done
  args+=(--config "threads=1024 threads_per_row=1024 vec=8 registers shared_weights shared_prefetch=1" --config "threads=1024 threads_per_row=1024 vec=8 registers shared_prefetch=1")
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 150 $B/normjit bench --forward --graph --kinds $kind --dtypes bf16,fp16 --weights $w --n 32768,65536,131072,262144 "${args[@]}" --json $OUT/logs/sp-$kind-$w.json > $OUT/logs/sp-$kind-$w.txt 2>&1
  echo "sp $kind $w exit $? at $SECONDS s"; grep -E "^(rms|layer)" $OUT/logs/sp-$kind-$w.txt | sed 's/  */ /g' | cut -d' ' -f2,5-7,10-20 | cut -c1-150
}
sp layernorm fp32
sp rmsnorm fp32
sp layernorm same
scripts/bench-ab.sh $B/v/old $B/normjit $OUT/logs/ab fwd "--forward --graph --kinds rmsnorm --dtypes bf16,fp16 --weights fp32 --n 49152,57344,65536,73728,81920,90112,98304,114688,122880,131072" fwdsame "--forward --graph --kinds rmsnorm --dtypes bf16 --weights same --n 57344,81920,98304,114688" rc "--graph --fused recompute --kinds layernorm --dtypes bf16,fp16 --n 3840,4096,4608" > $OUT/logs/ab/ab.txt 2>&1
echo "ab at $SECONDS s"
for s in fwd fwdsame rc; do for r in 1 2; do python3 bench/compare_bench.py $OUT/logs/ab/$s-old$r.json $OUT/logs/ab/$s-new$r.json > $OUT/logs/ab/$s-cmp$r.txt 2>&1; done
  paste -d'|' <(grep -E "^(layernorm|rmsnorm)" $OUT/logs/ab/$s-cmp1.txt | cut -d'|' -f1-2) <(grep -E "^(layernorm|rmsnorm)" $OUT/logs/ab/$s-cmp2.txt | cut -d'|' -f2,4 | cut -c1-70); tail -1 $OUT/logs/ab/$s-cmp1.txt; tail -1 $OUT/logs/ab/$s-cmp2.txt; done
tb() {  # name, tune args
  local name=$1; shift
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 60 $B/normjit tune --exhaustive "$@" > $OUT/logs/tune-$name.txt 2>&1
  echo "$name exit $? at $SECONDS s"; grep -E '^ *fit' $OUT/logs/tune-$name.txt | awk -F'|' '{print $3, "|", $2}' | sort -n | head -3
  grep -E "M<=[0-9]+ +[0-9]+ " $OUT/logs/tune-$name.txt | tail -1 | sed 's/  */ /g' | cut -c1-260
}
for d in fp16 bf16; do for k in layernorm rmsnorm; do for n in 1024 1536; do
  tb $k-parallel-$d-$n --kind $k --parallel --dtype $d --weight-dtype fp32 --n $n --m $((67108864 / n))
done; done; done
tar czf $OUT/call3.tgz -C $OUT logs && rm -rf $OUT/logs
