#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds, runs every test through ctest.
# GPU tests skip (and say so) on a machine without a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
build="${BUILD_DIR:-build}"
# Each test's cache goes to a private directory; never the user's.
export NORMJIT_CACHE_DIR="$(mktemp -d)"
trap 'rm -rf "$NORMJIT_CACHE_DIR"' EXIT
ctest --test-dir "$build" --output-on-failure -j "${JOBS:-$(nproc)}" --timeout 600
