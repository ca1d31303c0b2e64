#!/usr/bin/env bash
# Session 58, call 7 (H200). build-device: call 6's rules, but the wide cluster takes the fewest
# threads that hold a block's slots (call 6: LN bf16 262152 704 threads 225.5 us against 283.5
# for 1024; 327680 864 268.5 / 306.7), which leaves LayerNorm room for γ in shared memory; and
# RMSNorm's fp32 rows keep their cluster at one row below 131072 (call 6: 65536 tied).
# 1. GPU tests: BackwardGridCluster.* and Tuning.*.
# 2. tune --config: the rule's config (timed first) against 1024 threads and without γ held.
# 3. A/B against 4960795 (the session's start) past 262144, as call 5's "past" set.
set -uo pipefail
B=build-device
GPU_TEST_SHARDS=8 GPU_TEST_FILTER='BackwardGridCluster.*:Tuning.*' BUILD_DIR=$B OUT=$OUT timeout 120 scripts/gpu-run.sh gpu-tests > $OUT/tests-run.txt 2>&1
echo "tests exit $? at $SECONDS s"
grep -hE '^\[  (PASSED|FAILED|SKIPPED) ' $OUT/gpu-tests*.txt | sort | uniq -c | head; grep -h -B2 -A8 'Failure' $OUT/gpu-tests*.txt | head -40
c() { echo "threads=$1 threads_per_row=$1 vec=$2 registers cluster=16 shared_sums${3:-}"; }
while IFS='|' read -r shape cfgs; do
  set -- $shape
  args=(); IFS=';' read -ra cs <<< "$cfgs"
  for x in "${cs[@]}"; do args+=(--config "$(eval echo "$x")"); done
  echo "### $shape" >> $OUT/configs.txt
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 30 $B/normjit tune --kind $1 --dtype $2 --weight-dtype fp32 --n $3 --m 256 "${args[@]}" \
    2>/dev/null | grep -E "^ *config" >> $OUT/configs.txt
done <<'SHAPES'
layernorm bf16 262152|$(c 1024 8);$(c 704 8)
rmsnorm bf16 262152|$(c 1024 8 " shared_weights")
layernorm bf16 327680|$(c 1024 8)
rmsnorm bf16 327680|$(c 1024 8 " shared_weights")
layernorm fp16 327680|$(c 1024 8)
layernorm fp32 262152|$(c 1024 4);$(c 832 4)
rmsnorm fp32 262152|$(c 1024 4 " shared_weights")
SHAPES
echo "configs done at $SECONDS s"
mkdir -p $OUT/ab
timeout 120 scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab \
  past "--graph --dtypes bf16,fp32 --weights fp32 --n 262145,262152,270328,327680,393216,458752" > $OUT/ab.txt 2>&1
echo "ab exit $? at $SECONDS s"
mkdir -p $OUT/logs && mv $OUT/gpu-tests*.txt $OUT/tests-run.txt $OUT/ab $OUT/logs/ 2>/dev/null
tar czf $OUT/call7.tgz -C $OUT logs && rm -rf $OUT/logs
