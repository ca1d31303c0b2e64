#!/usr/bin/env bash
# Copies what the GPU machine runs out of ${BUILD_DIR:-build} into ${BUNDLE_DIR:-build-device}:
# the library, the normjit command, the test binaries, ctest's files and COMMIT (the commit
# built), without objects, static libraries or precompiled headers (the build folder is 170 MB
# with them; the device tool carries 64 MiB at most). Then carry build-device and run the GPU
# scripts with BUILD_DIR=build-device.
#   OLD_REV=<commit> scripts/device-bundle.sh   also builds that commit's normjit command (a git
#   worktree under ${TMPDIR:-/tmp}, Release) into $bundle/v/old: the OLD binary of
#   scripts/bench-ab.sh's A/B (the command links libnormjit statically, so it runs alone).
#   OLD_BIN=<file> scripts/device-bundle.sh    copies a normjit command built before (say, the
#   session start's, saved aside) to $bundle/v/old instead. The bundle is made afresh each time,
#   so v/old is there only when one of the two is given.
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
if [ -n "${OLD_BIN:-}" ]; then
  mkdir -p "$bundle/v"
  cp "$OLD_BIN" "$bundle/v/old"
  echo "device-bundle: $bundle/v/old is $OLD_BIN"
elif [ -n "${OLD_REV:-}" ]; then
  old_tree="${TMPDIR:-/tmp}/normjit-old-$(git rev-parse --short "$OLD_REV")"
  [ -d "$old_tree" ] || git worktree add --detach -f "$old_tree" "$OLD_REV" >/dev/null
  (cd "$old_tree" && cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null &&
     cmake --build build -j "${JOBS:-$(nproc)}" --target normjit_cli >/dev/null)
  mkdir -p "$bundle/v"
  cp "$old_tree/build/normjit" "$bundle/v/old"
  echo "device-bundle: $bundle/v/old is normjit at $(git rev-parse --short "$OLD_REV") (worktree $old_tree; git worktree remove it when done)"
fi
