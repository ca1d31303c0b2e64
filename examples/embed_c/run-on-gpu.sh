#!/usr/bin/env bash
# On the GPU machine: runs the C embedding example from an already-built build folder (nothing
# is compiled there) and keeps its output in $OUT/embed_c.txt.
#   BUILD_DIR=build-embed OUT=/tmp/out examples/embed_c/run-on-gpu.sh
# Exit status: the example's (0 all cases match, 1 a mismatch or failed call), except that 77
# (no GPU) becomes 3 here: on the machine this script is for, no GPU is itself a failure.
set -uo pipefail
cd "$(dirname "$0")/../.."
build="${BUILD_DIR:-build}"
out="${OUT:-/tmp/normjit-out}"
mkdir -p "$out"
program="$build/examples/embed_c/example_embed_c"
if [ ! -x "$program" ]; then
  echo "run-on-gpu.sh: $program is missing: build it first (BUILD_DIR=$build scripts/build.sh) and bring that folder." >&2
  exit 2
fi
cache="$(mktemp -d)"
trap 'rm -rf "$cache"' EXIT
NORMJIT_CACHE_DIR="$cache" "$program" 2>&1 | tee "$out/embed_c.txt"
rc=${PIPESTATUS[0]}
echo "example_embed_c exit status: $rc" | tee -a "$out/embed_c.txt"
if [ "$rc" -eq 77 ]; then
  echo "run-on-gpu.sh: the example found no GPU on this machine (see the line above); nothing was checked." >&2
  exit 3
fi
exit "$rc"
