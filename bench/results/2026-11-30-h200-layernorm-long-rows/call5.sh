#!/usr/bin/env bash
# Session 48, call 5 (H200), the device tool's command line as run: build-device as call 4.
# The Python tests, four processes.
NORMJIT_LIBRARY=$PWD/build-device/libnormjit.so timeout 200 python3 python/tests/run.py --shards 4 > $OUT/python-tests.txt 2>&1; echo "exit $?"; tail -15 $OUT/python-tests.txt
