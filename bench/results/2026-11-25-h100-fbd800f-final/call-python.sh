#!/usr/bin/env bash
# Session 23, call 5: at fbd800f, the Python package's GPU tests (the PyTorch modules run the
# forward's kernels too).
set -uo pipefail
BUILD_DIR=build-device OUT=$OUT/python scripts/gpu-run.sh python > $OUT/python.txt 2>&1
echo "python rc=$? at ${SECONDS}s"; tail -5 $OUT/python.txt; grep -rh "passed\|failed" $OUT/python/*.txt 2>/dev/null | tail -3
