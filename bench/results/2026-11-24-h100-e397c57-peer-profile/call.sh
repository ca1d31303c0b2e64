#!/usr/bin/env bash
# Session 13, call 17 (e397c57): profile.py (this folder) on the GPU: where peers.py's extra
# 15-25 µs per normjit backward go.
set -uo pipefail
b=build-device
export NORMJIT_LIBRARY="$(cd $b && pwd)/libnormjit.so" NORMJIT_CACHE_DIR=$(mktemp -d)
PYTHONPATH=python timeout 300 python3 bench/results/2026-11-24-h100-e397c57-peer-profile/profile.py > $OUT/profile.txt 2>&1
echo "exit $?"; grep -E "inner=|Sync|sync|nj_|Memset|memset|fill|copy|Copy" $OUT/profile.txt | cut -c1-160 | head -50
