#!/usr/bin/env bash
# Session 18, call 11 (df53edf; the last heuristic change is 8f23a3a): the speed sweep of both
# passes (bench --graph, every dtype and weight dtype, M·N = 64 Mi) for the README's tables,
# then the Python package's GPU tests in the time left.
set -uo pipefail
b=build-device; o=$OUT; w=$(mktemp -d)
scripts/gpu-environment.sh $b > $o/environment.txt 2>&1
export NORMJIT_CACHE_DIR=$(mktemp -d)
timeout 200 $b/normjit bench --graph --json $o/bench.json > $o/bench.txt 2>&1; echo "backward bench exit $? at ${SECONDS}s"
timeout 160 $b/normjit bench --forward --graph --json $o/bench-forward.json > $o/bench-forward.txt 2>&1; echo "forward bench exit $? at ${SECONDS}s"
BUILD_DIR=$b OUT=$w timeout $((585 - SECONDS)) scripts/gpu-run.sh python > $w/gpu-run-python.txt 2>&1; echo "python exit $? at ${SECONDS}s"
cp $w/python.txt $o/ 2>/dev/null; grep -E "passed|failed" $o/python.txt | tail -3
