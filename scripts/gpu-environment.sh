#!/usr/bin/env bash
# Prints what a GPU run ran on and with: the date, the commit the build folder was built from,
# the GPU and its driver, `normjit doctor`, and what libnormjit.so links. GPU scripts and the
# one-off scripts of device calls (bench/results/*/call.sh) tee it into $OUT/environment.txt.
#   usage: scripts/gpu-environment.sh [BUILD_DIR]   (default: $BUILD_DIR, else build)
set -uo pipefail
build="${1:-${BUILD_DIR:-build}}"
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "commit: $(cat "$build/COMMIT" 2>/dev/null || echo unknown)"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1
"$build/normjit" doctor 2>&1
echo "ldd libnormjit.so:"
ldd "$build/libnormjit.so" 2>&1
