#!/usr/bin/env bash
# Copies what the GPU machine runs out of ${BUILD_DIR:-build} into ${BUNDLE_DIR:-build-device}:
# the library, the normjit command, the test binaries, ctest's files and COMMIT (the commit
# built), without objects, static libraries or precompiled headers (the build folder is 170 MB
# with them; the device tool carries 64 MiB at most). Then carry build-device and run the GPU
# scripts with BUILD_DIR=build-device.
set -euo pipefail
cd "$(dirname "$0")/.."
build="${BUILD_DIR:-build}"
bundle="${BUNDLE_DIR:-build-device}"
git rev-parse --short HEAD >"$build/COMMIT"
[ -z "$(git status --porcelain --untracked-files=no)" ] || echo "device-bundle: note: the working tree has uncommitted changes" >&2
rm -rf "$bundle"
mkdir -p "$bundle"
tar -C "$build" --exclude=CMakeFiles --exclude='*.gch' --exclude='*.o' --exclude='*.a' -cf - . | tar -C "$bundle" -xf -
echo "device-bundle: $bundle ($(du -sh "$bundle" | cut -f1)) from $build at $(cat "$build/COMMIT")"
