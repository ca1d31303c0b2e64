#!/usr/bin/env bash
# The CPU test suite under AddressSanitizer + UndefinedBehaviorSanitizer (+ LeakSanitizer).
# Builds the library and normjit_cpu_tests with -DNORMJIT_SANITIZE=ON (-O1 -g) into
# ${SANITIZE_BUILD_DIR:-build-sanitize}/ and runs the test binary directly, so that any report
# (memory error, undefined behaviour, leak) aborts it and this script exits non-zero.
# Extra arguments go to the test binary (e.g. --gtest_filter=Config*).
set -euo pipefail
cd "$(dirname "$0")/.."
build="${SANITIZE_BUILD_DIR:-build-sanitize}"
export PATH="/usr/local/cuda/bin:$PATH"

# -O1 -g: usable stacks at a tolerable speed. The option adds -fsanitize=address,undefined
# -fno-omit-frame-pointer; -fno-sanitize-recover=all makes every UBSan check fatal even if
# UBSAN_OPTIONS were lost (a child process, say).
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g" \
  -DNORMJIT_SANITIZE=ON -DNORMJIT_FUZZ=OFF ${SANITIZE_CMAKE_ARGS:-} >/dev/null
# normjit_cli too: the CPU tests know its path (NORMJIT_CLI_PATH) and may run it.
cmake --build "$build" -j "${JOBS:-$(nproc)}" --target normjit_cpu_tests normjit_cli

export ASAN_OPTIONS="halt_on_error=1:abort_on_error=0:detect_leaks=1:detect_stack_use_after_return=1:strict_init_order=1:check_initialization_order=1:detect_odr_violation=2"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
export LSAN_OPTIONS="suppressions=$supp:print_suppressions=0"

# Each run's kernel cache goes to a private directory; never the user's.
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
export NORMJIT_CACHE_DIR="$tmp/cache"
supp="$tmp/lsan.supp"
cat >"$supp" <<'SUPP'
SUPP

# The whole suite, NVRTC compile sweep included: ~25 s unsanitized, ~XX s here (measured on
# 2 cores). NVRTC itself is not instrumented; only our side of each call is checked.
start=$SECONDS
"$build/tests/normjit_cpu_tests" --gtest_brief=1 "$@"
echo "sanitize: normjit_cpu_tests clean under ASan+UBSan+LSan ($((SECONDS - start)) s)"
