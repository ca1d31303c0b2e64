#!/usr/bin/env bash
# Session 61, call 1 (H200). build-device: 104c7f2 plus the forward's cluster check at 16 blocks
# (codegen/forward_config.cpp, uncommitted: --config only; no rule or candidate takes it).
# v/old: the session's start (7e23c8a).
# 1. GPU tests: BackwardParallel.* (the new rule's 13832 / 14336 / 16384 in the held-gradient test).
# 2. A/B old vs new, bench --graph, parallel norms (and the option-free row, the control), bf16
#    with fp32 and bf16 γ, 13824 (unchanged) to 16384.
# 3. The forward's long 16-bit rows (LN 65536-262144 at 52-64% of copy with fp32 γ, 1M at
#    57-60%): tune --forward --config beside the heuristic: γ/β in shared memory, clusters of 8 and
#    16, streamed clusters of 16 at 1M.
set -uo pipefail
B=build-device
mkdir -p $OUT/logs
GPU_TEST_SHARDS=4 GPU_TEST_FILTER='BackwardParallel.*' BUILD_DIR=$B OUT=$OUT/logs timeout 140 scripts/gpu-run.sh gpu-tests > $OUT/logs/tests-run.txt 2>&1
echo "tests exit $? at $SECONDS s"
grep -hE '^\[  (PASSED|FAILED|SKIPPED) ' $OUT/logs/gpu-tests*.txt | sort | uniq -c | head; grep -h -B2 -A8 'Failure' $OUT/logs/gpu-tests*.txt | head -30
. bench/results/2026-12-01-h200-long-forward-rows/forward-configs.sh
shapes | while IFS='|' read -r shape rest; do
  set -- $shape
  IFS='|' read -ra cfgs <<< "$rest"
  args=(); for cf in "${cfgs[@]}"; do args+=(--config "$cf"); done
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 45 $B/normjit tune --forward --kind $1 --dtype bf16 --weight-dtype fp32 --n $2 --m $3 "${args[@]}" > $OUT/logs/fwd-$1-$2.txt 2>&1
  echo "-- forward $1 $2 M=$3 exit $? at $SECONDS s"
  grep -E '^ *config |does not fit|rror' $OUT/logs/fwd-$1-$2.txt | sed 's/  */ /g; s/.*| threads=/threads=/; s/threads_per_row=[0-9]* //' | cut -c1-140
done
mkdir -p $OUT/logs/ab
scripts/bench-ab.sh $B/v/old $B/normjit $OUT/logs/ab par "--graph --n 13824,13832,14336,15360,16384 --dtypes bf16 --weights fp32,same --fused parallel" > $OUT/logs/ab/ab.txt 2>&1
echo "ab at $SECONDS s"
for r in 1 2; do python3 bench/compare_bench.py $OUT/logs/ab/par-old$r.json $OUT/logs/ab/par-new$r.json > $OUT/logs/ab/par-cmp$r.txt 2>&1; done
paste -d'|' <(grep -E "parallel|none" $OUT/logs/ab/par-cmp1.txt | cut -c1-120) <(grep -E "parallel|none" $OUT/logs/ab/par-cmp2.txt | awk '{print $NF}'); tail -1 $OUT/logs/ab/par-cmp1.txt; tail -1 $OUT/logs/ab/par-cmp2.txt
tar czf $OUT/call1.tgz -C $OUT logs && rm -rf $OUT/logs
