#!/usr/bin/env bash
# The CPU test suite under AddressSanitizer + UndefinedBehaviorSanitizer + LeakSanitizer.
# Builds the library, normjit_cpu_tests and the normjit command (the CLI tests run it) with
# -DNORMJIT_SANITIZE=ON at -O0 -g1 into ${SANITIZE_BUILD_DIR:-build-sanitize}/, then runs the
# test binary directly: any sanitizer report or failed test makes this script exit non-zero.
# Extra arguments go to the test binary, e.g. scripts/sanitize.sh --gtest_filter='Config*'.
# The compiler is the project's usual one (g++): the CPU tests do not build with clang 14.
set -euo pipefail
cd "$(dirname "$0")/.."
build="${SANITIZE_BUILD_DIR:-build-sanitize}"
export PATH="/usr/local/cuda/bin:$PATH"

start=$SECONDS
# shellcheck disable=SC2086  # SANITIZE_CMAKE_ARGS: several arguments, as CMAKE_ARGS in build.sh
# -g1: line tables only, enough for the sanitizers' file:line stack traces; full debug info made
# this build 390 s on the 2-core CI machine, -g1 273 s (2026-11-23). -O0: the sanitizers find
# at least what they find at -O1 (nothing is optimised away), and on a 2-core dev machine the
# build took 80 s instead of 261 and the suite 65 s instead of 70 (2026-11-24, db422c6).
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O0 -g1" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O0 -g1" \
  -DNORMJIT_SANITIZE=ON -DNORMJIT_FUZZ=OFF ${SANITIZE_CMAKE_ARGS:-} >/dev/null
cmake --build "$build" -j "${JOBS:-$(nproc)}" --target normjit_cpu_tests normjit_cli
echo "sanitize: built in $((SECONDS - start)) s"

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# Each run's kernel cache goes to a private directory; never the user's.
export NORMJIT_CACHE_DIR="$tmp/cache"

# UBSan suppressions: none. Add one only with the finding, its report and the fix to come
# (the C API's out-of-range enum load that needed one is fixed: runtime/c_api.cpp bits_of).
: >"$tmp/ubsan.supp"
# No LSan suppressions are needed: the suite runs leak-free, NVRTC (opened with dlopen)
# included, as measured with detect_leaks=1. Add one here only with the leak's stack and why.

export ASAN_OPTIONS="halt_on_error=1:detect_leaks=1:detect_stack_use_after_return=1:check_initialization_order=1:strict_init_order=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:suppressions=$tmp/ubsan.supp"
export LSAN_OPTIONS="print_suppressions=0"

# The whole suite, the NVRTC compile sweep (AllFamilies/CompileSweep.*) included. The sweep is
# NVRTC-bound (NVRTC itself is not instrumented) and takes ~80 of the suite's ~100 s of CPU time
# here, so the suite runs as one gtest shard per core. To leave the sweep out when in a hurry:
#   scripts/sanitize.sh --gtest_filter='-AllFamilies/CompileSweep.*'
start=$SECONDS
shards="${JOBS:-$(nproc)}"
for ((i = 0; i < shards; i++)); do
  GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i \
    "$build/tests/normjit_cpu_tests" --gtest_brief=1 "$@" >"$tmp/shard$i.log" 2>&1 &
done
passed=0
failed=0
status=0
for ((i = 0; i < shards; i++)); do
  wait -n || status=1
done
for ((i = 0; i < shards; i++)); do
  log="$tmp/shard$i.log"
  p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) tests\{0,1\}\.$/\1/p' "$log")
  f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) tests\{0,1\}, listed below:$/\1/p' "$log")
  passed=$((passed + ${p:-0}))
  failed=$((failed + ${f:-0}))
  # A shard that died (a sanitizer report aborts it) or failed: show why.
  if [ -z "$p" ] || [ -n "$f" ] || grep -q -E 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$log"; then
    status=1
    [ -z "$p$f" ] && failed=$((failed + 1))  # no summary: count the shard as one failure
    echo "sanitize: shard $i of $shards failed; its log without the passing tests:"
    grep -v -E '^\[ +(OK|RUN) +\]' "$log" | tail -150 || true
  fi
done
echo "sanitize: normjit_cpu_tests under ASan+UBSan+LSan in $((SECONDS - start)) s ($shards shards)"
echo "sanitize: ${passed} passed, ${failed} failed"
exit $status
