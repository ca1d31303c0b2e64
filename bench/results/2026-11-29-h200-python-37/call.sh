#!/usr/bin/env bash
# Session 37, call 7 (H200), build-device = the commit of this script: the Python package's GPU
# tests, the example transformer and the host-time breakdown (scripts/gpu-python.sh), last run at
# dfa438f; the kernels' configs changed since (sessions 34-37), the package did not.
set -uo pipefail
BUILD_DIR=build-device OUT=$OUT timeout 560 scripts/gpu-python.sh > $OUT/python-run.txt 2>&1
echo "gpu-python: exit $? at $SECONDS s"; tail -25 $OUT/python-run.txt
