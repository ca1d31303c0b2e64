#!/usr/bin/env bash
# Session 58, call 8 (H200), the last of the session's device time. build-device: call 7's rules,
# and RMSNorm's 16-bit rows aligned to less past 262144 in the wide cluster of realigned slots
# (call 2: 370 us against 589 for the grid at 327681, in 1024 threads; the rule takes the fewest).
# 1. GPU tests: BackwardGridCluster.* (three new RMSNorm cases aligned to 2 bytes).
# 2. A/B against 4960795: RMSNorm bf16/fp16 odd N past 262144, M = 64 Mi / N and 1-16 rows.
# 3. tune --config: the rule's realigned cluster against 1024 threads and the grid; for the next
#    session, clusters of 3 slots a thread in the fewest threads at 65536-262144 (today 2 slots
#    in 1024) and few rows of odd RMS rows in the cluster against the grid.
set -uo pipefail
B=build-device
GPU_TEST_SHARDS=8 GPU_TEST_FILTER='BackwardGridCluster.*' BUILD_DIR=$B OUT=$OUT timeout 90 scripts/gpu-run.sh gpu-tests > $OUT/tests-run.txt 2>&1
echo "tests exit $? at $SECONDS s"
grep -hE '^\[  (PASSED|FAILED|SKIPPED) ' $OUT/gpu-tests*.txt | sort | uniq -c | head; grep -h -B2 -A8 'Failure' $OUT/gpu-tests*.txt | head -40
mkdir -p $OUT/ab
timeout 110 scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab \
  odd "--graph --kinds rmsnorm --dtypes bf16,fp16 --weights fp32 --n 262147,300001,327681,393215" \
  oddfew "--graph --kinds rmsnorm --dtypes bf16 --weights fp32 --m 1,4,16,32 --n 262147,327681" > $OUT/ab.txt 2>&1
echo "ab exit $? at $SECONDS s"
c() { echo "threads=$1 threads_per_row=$1 vec=8 registers cluster=$2 shared_sums${3:-}"; }
g() { echo "threads=$1 threads_per_row=$1 vec=8 registers cluster=132 grid staged stages=5"; }
while IFS='|' read -r shape cfgs; do
  [ $SECONDS -gt 250 ] && { echo "out of time at $shape"; break; }
  set -- $shape
  args=(); IFS=';' read -ra cs <<< "$cfgs"
  for x in "${cs[@]}"; do args+=(--config "$(eval echo "$x")"); done
  echo "### $shape" >> $OUT/configs.txt
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 30 $B/normjit tune --kind $1 --dtype bf16 --weight-dtype fp32 --n $2 --align $3 --m $4 "${args[@]}" \
    2>/dev/null | grep -E "^ *config" >> $OUT/configs.txt
done <<'SHAPES'
rmsnorm 327681 2 256|$(c 1024 16 " shared_weights");$(g 320)
rmsnorm 262147 2 256|$(c 1024 16 " shared_weights")
rmsnorm 327681 2 16|$(c 864 16 " shared_weights")
layernorm 262144 16 256|$(c 704 16 " shared_weights");$(c 704 16)
rmsnorm 262144 16 256|$(c 704 16 " shared_weights")
layernorm 131072 16 512|$(c 704 8 " shared_weights");$(c 704 8)
rmsnorm 131072 16 512|$(c 704 8 " shared_weights")
layernorm 65536 16 1024|$(c 704 4 " shared_weights");$(c 704 4)
rmsnorm 65536 16 1024|$(c 704 4 " shared_weights")
SHAPES
echo "configs done at $SECONDS s"
mkdir -p $OUT/logs && mv $OUT/gpu-tests*.txt $OUT/tests-run.txt $OUT/ab $OUT/logs/ 2>/dev/null
tar czf $OUT/call8.tgz -C $OUT logs && rm -rf $OUT/logs
