#!/usr/bin/env bash
# Session 26, call 5 (H100), 96adb72: the Python package's GPU tests, the example transformer's
# loss curves and the host-overhead table.
set -uo pipefail
BUILD_DIR=build-device OUT=$OUT/python scripts/gpu-run.sh python > $OUT/python.txt 2>&1
echo "python rc=$? at ${SECONDS}s"; tail -5 $OUT/python.txt; grep -rh "passed\|failed" $OUT/python/*.txt 2>/dev/null | tail -3
