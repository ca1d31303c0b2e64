#!/usr/bin/env bash
# Session 44, call 3 (H200). build-device = this commit: nj_reduce_partials reads 16-byte slices
# (N a multiple of 4), 8 lanes down the rows, a quarter of the blocks, and discards its lines at
# any number of groups; v/old = 1fda0ec (old reduction, no discard); v/t64 = this commit with
# the discard only from 64 groups on.
# Call 2 measured the old reduction at 26 us of LN bf16 262144's ~200 (16384 blocks of 512 threads
# for 8 partial rows: bound by blocks) and 11 us at 65536. Prediction: 262144 -20 us (~10%),
# 131072/65536 -5 to -8 us, shapes of many groups a little; the discard keeps DRAM at the minimum.
set -uo pipefail
B=build-device
mkdir -p $OUT/ab $OUT/dram
scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab \
  bwd "--graph --dtypes bf16 --weights same --n 4096,8192,12288,14336,16384,32768,65536,131072,262144,1048576,5003" \
  fp32 "--graph --dtypes fp32 --weights fp32 --n 8192,16384,65536,262144,4095"
echo "ab exit $? at $SECONDS s"
scripts/bench-ab.sh $B/v/t64 $B/normjit $OUT/ab t64 "--graph --dtypes bf16 --weights same --n 32768,65536,131072,262144"
echo "t64 ab exit $? at $SECONDS s"
for shape in "layernorm 16384" "layernorm 65536" "layernorm 262144" "rmsnorm 262144"; do
  set -- $shape
  timeout 100 python3 bench/dram_traffic.py --normjit $B/normjit --kind $1 --n $2 --dtype bf16 --weights same > $OUT/dram/$1-$2-new.txt 2>&1
  echo "[dram $1 $2 exit $?, $SECONDS s]"; cut -c1-160 $OUT/dram/$1-$2-new.txt
done
GPU_TEST_SHARDS=16 BUILD_DIR=$B OUT=$OUT timeout 300 scripts/gpu-run.sh gpu-tests > $OUT/gpu-run.txt 2>&1
echo "gpu tests exit $? at $SECONDS s"
grep -hE "^\[  (PASSED|FAILED) " $OUT/gpu-tests.txt | sort | uniq -c; grep -E "^\[  FAILED  \]|Failure" $OUT/gpu-tests.txt | head
grep -hE "^\[  PASSED  \] [0-9]+ test" $OUT/gpu-tests.txt | awk '{s+=$4} END {print "passed in all:", s}'
tar czf $OUT/call3-logs.tgz -C $OUT ab dram gpu-run.txt gpu-tests.txt 2>/dev/null
rm -rf $OUT/ab $OUT/dram $OUT/gpu-run.txt $OUT/gpu-tests.txt
