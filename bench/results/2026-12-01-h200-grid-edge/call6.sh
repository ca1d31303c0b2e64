#!/usr/bin/env bash
# Session 58, call 6 (H200). build-device: the final rules (call 5's, but one fp32 row takes the
# grid from 65536 columns, not 32768: call 5's graph replays had fp32 32768 at 0.65-0.94x).
# 1. The whole GPU suite, 16 shards.
# 2. A/B at fp32 32768-65536 and one row (old: 4960795) — 32768 should now match the old.
# 3. The wide cluster's 1024 threads against the fewest that hold its slots (tune --config).
set -uo pipefail
B=build-device
GPU_TEST_SHARDS=16 BUILD_DIR=$B OUT=$OUT timeout 450 scripts/gpu-run.sh gpu-tests > $OUT/tests-run.txt 2>&1
echo "tests exit $? at $SECONDS s"
grep -hE '^\[  (PASSED|FAILED|SKIPPED) ' $OUT/gpu-tests*.txt | sort | uniq -c | head; grep -h -B2 -A8 'Failure' $OUT/gpu-tests*.txt | head -40
grep -h "^\[  FAILED  \]\|^\[  SKIPPED \] [A-Z]" $OUT/gpu-tests*.txt | sort -u | head -20
mkdir -p $OUT/ab
timeout 40 scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab \
  one "--graph --dtypes fp32 --m 1 --n 32768,65536" > $OUT/ab.txt 2>&1
echo "ab exit $? at $SECONDS s"
for s in "layernorm 262152 704" "layernorm 327680 864" "rmsnorm 327680 864"; do
  set -- $s
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 30 $B/normjit tune --kind $1 --dtype bf16 --weight-dtype fp32 --n $2 --m 256 \
    --config "threads=$3 threads_per_row=$3 vec=8 registers cluster=16 shared_sums" 2>/dev/null | grep -E "^ *config" >> $OUT/configs.txt
done
echo "configs done at $SECONDS s"
mkdir -p $OUT/logs && mv $OUT/gpu-tests*.txt $OUT/tests-run.txt $OUT/ab $OUT/logs/ 2>/dev/null
tar czf $OUT/call6.tgz -C $OUT logs && rm -rf $OUT/logs
