#!/usr/bin/env bash
# Configures and builds normjit (Release, no debug info) into ${BUILD_DIR:-build}.
set -euo pipefail
cd "$(dirname "$0")/.."
build="${BUILD_DIR:-build}"
export PATH="/usr/local/cuda/bin:$PATH"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release ${CMAKE_ARGS:-} >/dev/null
cmake --build "$build" -j "${JOBS:-$(nproc)}"
