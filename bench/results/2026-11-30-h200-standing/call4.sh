#!/usr/bin/env bash
# Session 55, call 4 (H200). build-device as call 3 (the session's final code). The standing sweep
# against call 1 (both passes and the fused options of both), then the Python tests.
set -uo pipefail
B=build-device
BENCH_TIMEOUT=250 BUILD_DIR=$B OUT=$OUT timeout 300 scripts/gpu-standing.sh bench/results/2026-11-30-h200-standing/call1
echo "standing exit $? at $SECONDS s"
NORMJIT_CACHE_DIR=$(mktemp -d) NORMJIT_LIBRARY=$PWD/$B/libnormjit.so timeout 240 python3 python/tests/run.py --shards 4 > $OUT/python-tests.txt 2>&1
echo "python exit $? at $SECONDS s"; tail -4 $OUT/python-tests.txt
tar czf $OUT/call4.tgz -C $OUT $(cd $OUT && ls standing-*.txt python-tests.txt) && rm -f $OUT/standing-*.txt
