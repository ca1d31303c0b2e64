#!/usr/bin/env bash
# Session 43, call 7 (H200): build-device = the commit of this script (kernels as calls 3-5').
# 1. The Python tests, four processes at once (RecomputeTest's parameter gradients now measured
#    against their terms' norm too, as call 4 did for the parallel norms and the gate).
# 2. bench/peers.py in bf16 (weights in x's dtype) at every N of the sweep, as the time allows
#    (bf16 had run at 7 N on the H200; Liger-Kernel 0.8.5's wheel in .whl/, carried).
set -uo pipefail
B=build-device
export NORMJIT_LIBRARY=$PWD/$B/libnormjit.so
NORMJIT_CACHE_DIR=$(mktemp -d) timeout 170 python3 python/tests/run.py --shards 4 > $OUT/python-tests.txt 2>&1
echo "python tests exit $? at $SECONDS s"; grep -E "^python:|^===== shard" $OUT/python-tests.txt; grep -E "^(ERROR|FAIL):" $OUT/python-tests.txt | head
grep -E "worst normwise error recompute" $OUT/python-tests.txt | head -12
left=$((470 - SECONDS))
BUILD_DIR=$B timeout $left scripts/gpu-peers.sh --dtype bf16 > /dev/null 2>&1
echo "peers bf16: exit $? at $SECONDS s"; cut -c1-250 $OUT/peers.txt
mv $OUT/peers.txt $OUT/peers-bf16.txt; mv $OUT/peers.json $OUT/peers-bf16.json 2>/dev/null
gzip $OUT/python-tests.txt
