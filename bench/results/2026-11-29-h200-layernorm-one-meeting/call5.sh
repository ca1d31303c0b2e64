#!/usr/bin/env bash
# Session 42, call 5 (H200): build-device = the commit of this script (kernels as call 4's). The
# Python package's GPU tests, the example transformer and the host-time tables
# (scripts/gpu-python.sh); last run in session 37, before sessions 38-42's phased rows.
set -uo pipefail
BUILD_DIR=build-device OUT=$OUT timeout 500 scripts/gpu-python.sh > $OUT/python-run.txt 2>&1
echo "gpu-python: exit $? at $SECONDS s"; tail -25 $OUT/python-run.txt
grep -E "passed|failed|Ran |OK|FAILED" $OUT/python.txt | head -10
