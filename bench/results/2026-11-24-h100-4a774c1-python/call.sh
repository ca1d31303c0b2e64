#!/usr/bin/env bash
# Session 17, call 12 (4a774c1; the last code change is da13afa): the Python package's GPU
# tests, the transformer example and the host-overhead bench.
set -uo pipefail
BUILD_DIR=build-device timeout 560 scripts/gpu-run.sh python > $OUT/gpu-run.txt 2>&1; echo "exit $?"
grep -E "passed|failed|curves|exit" $OUT/python.txt | tail -15
