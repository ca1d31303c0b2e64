#!/usr/bin/env bash
# Session 17, call 8 (9a4cd7e; the last kernel change is b2beac8): every GPU test (8 shards) and
# the forward's speed sweep (bench --forward, every dtype and weight dtype, graph replays).
set -uo pipefail
b=build-device; o=$OUT; w=$(mktemp -d)
scripts/gpu-environment.sh $b > $o/environment.txt 2>&1
export NORMJIT_CACHE_DIR=$(mktemp -d)
BUILD_DIR=$b OUT=$w GPU_TEST_SHARDS=8 timeout 300 scripts/gpu-run.sh gpu-tests > $w/gpu-run.txt 2>&1
grep -hE "^\[  (FAILED|PASSED) " $w/gpu-tests.txt | sort | uniq -c; grep -E "^\[  FAILED" $w/gpu-tests.txt | head
cp $w/gpu-tests.txt $o/
echo "tests done at ${SECONDS}s"
timeout $((590 - SECONDS)) $b/normjit bench --forward --graph --json $o/bench-forward.json > $o/bench-forward.txt 2>&1; echo "bench exit $? at ${SECONDS}s" >> $o/bench-forward.txt
tail -3 $o/bench-forward.txt
