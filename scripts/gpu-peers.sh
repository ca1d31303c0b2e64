#!/usr/bin/env bash
# On the GPU machine: bench/peers.py (normjit against PyTorch eager, torch.compile and
# Liger-Kernel) into $OUT/peers.txt and $OUT/peers.json. Builds nothing: the build folder
# travels with the call. Liger-Kernel comes as a wheel fetched on a machine with PyPI
# (`pip download liger-kernel --no-deps -d .whl/`; .whl/ is ignored by git, so name it in the
# device call's carry) and is unpacked into a temporary folder here.
#   BUILD_DIR=build scripts/gpu-peers.sh [peers.py options]
set -uo pipefail
cd "$(dirname "$0")/.."
build="${BUILD_DIR:-build}"
out="${OUT:-/tmp/normjit-out}"
mkdir -p "$out"
export NORMJIT_LIBRARY="$(cd "$build" 2>/dev/null && pwd)/libnormjit.so"
export NORMJIT_CACHE_DIR="$(mktemp -d)"
site="$(mktemp -d)"
trap 'rm -rf "$NORMJIT_CACHE_DIR" "$site"' EXIT
for wheel in .whl/liger_kernel-*.whl; do
  [ -f "$wheel" ] && python3 -m zipfile -e "$wheel" "$site"
done
[ -d "$site/liger_kernel" ] || echo "gpu-peers.sh: no Liger-Kernel wheel in .whl/: its column will say 'fails'" >&2
PYTHONPATH="python:$site${PYTHONPATH:+:$PYTHONPATH}" python3 bench/peers.py --json "$out/peers.json" "$@" 2>&1 |
  tee "$out/peers.txt"
exit "${PIPESTATUS[0]}"
