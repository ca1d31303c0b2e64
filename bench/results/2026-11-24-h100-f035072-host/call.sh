#!/usr/bin/env bash
# Session 14, call 2 (f035072): host_diag.py (this folder): where the host time of normjit's
# autograd backward goes.
set -uo pipefail
b=build-device
export NORMJIT_LIBRARY="$(cd $b && pwd)/libnormjit.so" NORMJIT_CACHE_DIR=$(mktemp -d)
PYTHONPATH=python timeout 250 python3 bench/results/2026-11-24-h100-f035072-host/host_diag.py > $OUT/host_diag.txt 2>&1
echo "exit $?" >> $OUT/host_diag.txt; cat $OUT/host_diag.txt
