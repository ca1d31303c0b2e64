#!/usr/bin/env bash
# One command on a fresh machine: install what is missing, build, and run the main job —
# the benchmark on a GPU, or without one the demo (generated and compiled kernels).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
build="${BUILD_DIR:-build}"
if "$build/normjit" doctor >/dev/null 2>&1; then
  exec "$build/normjit" bench --quick --latency --graph
else
  echo "No usable GPU here ($("$build/normjit" doctor 2>&1 | grep '^driver' | head -1)); running the demo."
  exec "$build/normjit" demo
fi
