#!/usr/bin/env bash
# Session 46, call 5 (H200), the build of call 4 (5128fc3).
# 1. The backward sweep (bench --latency --graph), for the README's standing.
# 2. The Python package's tests (graph capture, torch.compile).
# 3. Probes for the next session: LayerNorm bf16 16384 / 32768 in register-sum clusters of 8
#    elements a thread (no shared-memory sums: LayerNorm's shared sums and γ are ~24 bytes of
#    shared-memory traffic an element a row, about as long as its DRAM traffic at 16384).
# 4. memcheck and racecheck over the rows copied ahead (a new cp.async path into registers).
set -uo pipefail
B=build-device
NORMJIT_CACHE_DIR=$(mktemp -d) timeout 150 $B/normjit bench --latency --graph --json $OUT/bench.json > $OUT/bench.txt 2>&1
echo "sweep exit $? at $SECONDS s"
export NORMJIT_LIBRARY=$PWD/$B/libnormjit.so
NORMJIT_CACHE_DIR=$(mktemp -d) timeout 170 python3 python/tests/run.py --shards 4 > $OUT/python-tests.txt 2>&1
echo "python tests exit $? at $SECONDS s"; grep -E "^python:|^===== shard" $OUT/python-tests.txt; grep -E "^(ERROR|FAIL):" $OUT/python-tests.txt | head
gzip $OUT/python-tests.txt
for n in 16384 32768; do
  c=$((n / 4096)); c2=$((n / 8192))
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 60 $B/normjit tune --n $n --dtype bf16 --weight-dtype fp32 --m $((67108864 / n)) \
    --config "threads=512 threads_per_row=512 vec=8 registers cluster=$c min_blocks=2" \
    --config "threads=1024 threads_per_row=1024 vec=8 registers cluster=$c2" \
    --config "threads=256 threads_per_row=256 vec=8 registers cluster=$((2 * c)) min_blocks=4" > $OUT/probe-$n.txt 2>&1
  echo "probe $n exit $? at $SECONDS s"; grep -E '  fit ' $OUT/probe-$n.txt | sed 's/.*M<=[0-9]* | //'
done
left=$((585 - SECONDS)); [ $left -lt 60 ] && left=60
SANITIZE_TOOLS="memcheck racecheck" SANITIZE_FILTER_memcheck='BackwardSharedPrefetch.*' \
  SANITIZE_FILTER_racecheck='BackwardSharedPrefetch.TheSameBitsTwice' \
  TIMEOUT_memcheck=$(((left - 60) * 2 / 3)) TIMEOUT_racecheck=$(((left - 60) / 3)) WARMUP_TIMEOUT=50 \
  BUILD_DIR=$B OUT=$OUT timeout $left scripts/gpu-sanitize.sh > $OUT/sanitize-run.txt 2>&1
echo "sanitize exit $? at $SECONDS s"; tail -4 $OUT/sanitize.txt
gzip -f $OUT/sanitize.txt
