#!/usr/bin/env bash
# Session 45, call 3 (H200). build-device = dae4f23 (as call 2). v/old = 3511164, v/A = 6f6f777.
# 1. Host cost per call (bench --overhead), old / A / new, twice: do dependent launches
#    (cuLaunchKernelEx with the attribute) cost the host more than plain ones?
# 2. The backward sweep (bench --latency --graph) and the forward's (bench --forward --graph).
# 3. The Python package's tests (graph capture, torch.compile).
# 4. memcheck over the sanitize matrix and the new test, in the time left.
set -uo pipefail
B=build-device
for r in 1 2; do for v in old A new; do
  bin=$B/v/$v; [ $v = new ] && bin=$B/normjit
  echo "== overhead $v run $r"; NORMJIT_CACHE_DIR=$(mktemp -d) timeout 60 $bin bench --overhead 2>&1 | grep -A4 '^case'
done; done > $OUT/overhead.txt
echo "overhead done at $SECONDS s"; cat $OUT/overhead.txt
NORMJIT_CACHE_DIR=$(mktemp -d) timeout 150 $B/normjit bench --latency --graph --json $OUT/bench.json > $OUT/bench.txt 2>&1
echo "sweep exit $? at $SECONDS s"
NORMJIT_CACHE_DIR=$(mktemp -d) timeout 150 $B/normjit bench --forward --graph --json $OUT/bench-forward.json > $OUT/bench-forward.txt 2>&1
echo "forward sweep exit $? at $SECONDS s"
export NORMJIT_LIBRARY=$PWD/$B/libnormjit.so
NORMJIT_CACHE_DIR=$(mktemp -d) timeout 170 python3 python/tests/run.py --shards 4 > $OUT/python-tests.txt 2>&1
echo "python tests exit $? at $SECONDS s"; grep -E "^python:|^===== shard" $OUT/python-tests.txt; grep -E "^(ERROR|FAIL):" $OUT/python-tests.txt | head
gzip $OUT/python-tests.txt
left=$((590 - SECONDS)); [ $left -lt 30 ] && left=30
SANITIZE_TOOLS=memcheck SANITIZE_FILTER_memcheck='*BackwardMatrix*:DependentLaunches.*' TIMEOUT_memcheck=$((left - 20)) \
  BUILD_DIR=$B OUT=$OUT timeout $left scripts/gpu-sanitize.sh > $OUT/sanitize-run.txt 2>&1
echo "memcheck exit $? at $SECONDS s"; tail -3 $OUT/sanitize.txt
gzip -f $OUT/sanitize.txt
