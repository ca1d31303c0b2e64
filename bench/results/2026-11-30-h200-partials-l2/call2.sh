#!/usr/bin/env bash
# Session 44, call 2 (H200). build-device = this commit's working tree: the reduction discards the
# partial rows' L2 lines from 64 row groups on; v/old = 1fda0ec (no discard); v/discard-all =
# call 1's new binary (discard at any number of groups).
# 1. DRAM bytes per backward (bench/dram_traffic.py: ncu's DRAM counters, caches not flushed)
#    against the minimum, for each binary: what the partial rows cost in DRAM, and why few
#    groups (262144: 8) lost 2.4% with the discard.
# 2. The whole GPU suite on the new kernels.
set -uo pipefail
B=build-device
mkdir -p $OUT/dram
for shape in "layernorm 12288" "layernorm 16384" "layernorm 65536" "layernorm 262144" "rmsnorm 12288" "rmsnorm 16384"; do
  set -- $shape
  for v in old discard-all new; do
    bin=$B/v/$v; [ $v = new ] && bin=$B/normjit
    timeout 100 python3 bench/dram_traffic.py --normjit $bin --kind $1 --n $2 --dtype bf16 --weights same > $OUT/dram/$1-$2-$v.txt 2>&1
    echo "[$v, exit $?, $SECONDS s]"; cat $OUT/dram/$1-$2-$v.txt | cut -c1-160
  done
done
GPU_TEST_SHARDS=16 BUILD_DIR=$B OUT=$OUT timeout 300 scripts/gpu-run.sh gpu-tests > $OUT/gpu-run.txt 2>&1
echo "gpu tests exit $? at $SECONDS s"
grep -hE "^\[  (PASSED|FAILED) " $OUT/gpu-tests.txt | sort | uniq -c; grep -E "^\[  FAILED  \]|Failure" $OUT/gpu-tests.txt | head
grep -hE "^\[  PASSED  \] [0-9]+ test" $OUT/gpu-tests.txt | awk '{s+=$4} END {print "passed in all:", s}'
tar czf $OUT/call2-logs.tgz -C $OUT dram gpu-run.txt gpu-tests.txt environment.txt 2>/dev/null
rm -rf $OUT/dram $OUT/gpu-run.txt $OUT/gpu-tests.txt
