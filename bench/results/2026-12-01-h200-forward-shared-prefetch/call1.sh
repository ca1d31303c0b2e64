#!/usr/bin/env bash
# Session 62, call 1 (H200). build-device: aea1a09 + bench --config (pinned configs at bench's
# own M). v/old: the same but templates/norm_backward.cuh of b61f53a (before e24b55d).
# 1. GPU tests: BackwardParallel* on e24b55d (packed parallel rows' dx pass takes held g).
# 2. A/B old vs new: bench --graph --fused parallel, bf16, both γ types.
# 3. Forward RMSNorm fp32 γ between the powers of two: the clusters of 8 exhaustive tuning found
#    (at the M bucket's top) pinned at bench's M = 64 Mi / N, beside the heuristic.
# 4. Forward LayerNorm 229376: streamed 512-thread blocks two an SM at M = 292 (bench) and 512
#    (tune's bucket top): does the bucket explain tune and bench disagreeing?
# 5. Exhaustive backward tuning of the fused standing's worst shapes (powers of two: tune's M is
#    bench's): LN recompute 4096 and 32768, RMS recompute 32768, LN parallel 32768.
set -uo pipefail
B=build-device
mkdir -p $OUT/logs/ab
GPU_TEST_SHARDS=4 GPU_TEST_FILTER='BackwardParallel*' BUILD_DIR=$B OUT=$OUT/logs timeout 150 scripts/gpu-run.sh gpu-tests > $OUT/logs/tests-run.txt 2>&1
echo "tests exit $? at $SECONDS s"
grep -hE '^\[  (PASSED|FAILED|SKIPPED) ' $OUT/logs/gpu-tests*.txt | sort | uniq -c | head; grep -hE '^\[  FAILED  \]' $OUT/logs/gpu-tests*.txt | head; grep -h -B2 -A8 'Failure' $OUT/logs/gpu-tests*.txt | head -30
scripts/bench-ab.sh $B/v/old $B/normjit $OUT/logs/ab par "--graph --fused parallel --n 4096,5003,16384,32768 --dtypes bf16" > $OUT/logs/ab/ab.txt 2>&1
echo "ab at $SECONDS s"
for r in 1 2; do python3 bench/compare_bench.py $OUT/logs/ab/par-old$r.json $OUT/logs/ab/par-new$r.json > $OUT/logs/ab/par-cmp$r.txt 2>&1; done
paste -d'|' <(grep -E "^(layernorm|rmsnorm)" $OUT/logs/ab/par-cmp1.txt | cut -d'|' -f1-2) <(grep -E "^(layernorm|rmsnorm)" $OUT/logs/ab/par-cmp2.txt | cut -d'|' -f2,4 | cut -c1-70); tail -1 $OUT/logs/ab/par-cmp1.txt; tail -1 $OUT/logs/ab/par-cmp2.txt
fwd() {  # name, N, configs...
  local name=$1 n=$2; shift 2
  local args=()
  for c in "$@"; do args+=(--config "$c"); done
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 60 $B/normjit bench --forward --graph --kinds rmsnorm --dtypes bf16,fp16 --weights fp32 --n $n "${args[@]}" --json $OUT/logs/$name.json > $OUT/logs/$name.txt 2>&1
  echo "$name exit $? at $SECONDS s"; grep -E "^(rms|ln|layer)" $OUT/logs/$name.txt | cut -c1-200
}
fwd c8-49152 49152 "threads=384 threads_per_row=384 vec=8 registers cluster=8 prefetch min_blocks=2 shared_weights" "threads=384 threads_per_row=384 vec=8 registers cluster=8 prefetch shared_weights"
fwd c8-81920 81920 "threads=320 threads_per_row=320 vec=8 registers cluster=8 min_blocks=3 shared_weights" "threads=320 threads_per_row=320 vec=8 registers cluster=8 shared_weights"
fwd c8-98304 98304 "threads=384 threads_per_row=384 vec=8 registers cluster=8 min_blocks=2 shared_weights" "threads=384 threads_per_row=384 vec=8 registers cluster=8 shared_weights"
fwd c8-114688 114688 "threads=448 threads_per_row=448 vec=8 registers cluster=8 min_blocks=2 shared_weights" "threads=448 threads_per_row=448 vec=8 registers cluster=8 shared_weights"
fwd c8-229376 229376 "threads=896 threads_per_row=896 vec=8 registers cluster=8 shared_weights"
NORMJIT_CACHE_DIR=$(mktemp -d) timeout 60 $B/normjit bench --forward --graph --kinds layernorm --dtypes bf16 --weights fp32 --n 229376 --m 292,512 --config "threads=512 threads_per_row=512 vec=8 streamed min_blocks=2" --json $OUT/logs/ln-streamed.json > $OUT/logs/ln-streamed.txt 2>&1
echo "ln-streamed exit $? at $SECONDS s"; grep -E "^(rms|ln|layer)" $OUT/logs/ln-streamed.txt | cut -c1-200
tb() {  # name, tune args
  local name=$1; shift
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 60 $B/normjit tune --exhaustive --dtype bf16 --weight-dtype fp32 "$@" > $OUT/logs/tune-$name.txt 2>&1
  echo "$name exit $? at $SECONDS s"; grep -E '^ *fit' $OUT/logs/tune-$name.txt | awk -F'|' '{print $3, "|", $2}' | sort -n | head -4
  grep -E "M<=[0-9]+ +[0-9]+ " $OUT/logs/tune-$name.txt | tail -1 | cut -c1-260
}
tb ln-recompute-4096 --kind layernorm --recompute-from-output --n 4096 --m 16384
tb ln-recompute-32768 --kind layernorm --recompute-from-output --n 32768 --m 2048
tb rms-recompute-32768 --kind rmsnorm --recompute-from-output --n 32768 --m 2048
tb ln-parallel-32768 --kind layernorm --parallel --n 32768 --m 2048
tar czf $OUT/call1.tgz -C $OUT logs && rm -rf $OUT/logs
