#!/usr/bin/env bash
# scripts/gpu-sanitize.sh's verdicts without a GPU: a stand-in compute-sanitizer and test binary
# (tests/CMakeLists.txt runs this as the ctest `gpu_sanitize_script`). The warm-up stopped at its
# cap is no failure unless a test failed in it; a tool's errors, failed tests or timeout are.
#   usage: tests/scripts/gpu_sanitize_test.sh SOURCE_DIR
set -uo pipefail
src="${1:?usage: gpu_sanitize_test.sh SOURCE_DIR}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/build/tests" "$work/bin"
# The test binary: plain (the warm-up) it passes one test, fails one if FAKE_WARMUP_FAILS, then
# hangs past the warm-up's cap; under the stand-in sanitizer it passes, fails (FAKE_TOOL_FAILS)
# or hangs (FAKE_TOOL_HANGS).
cat >"$work/build/tests/normjit_gpu_tests" <<'BIN'
#!/usr/bin/env bash
if [ -z "${FAKE_UNDER_TOOL:-}" ]; then
  echo "[ RUN      ] A.one"; echo "[       OK ] A.one (3 ms)"
  [ -n "${FAKE_WARMUP_FAILS:-}" ] && { echo "[ RUN      ] A.two"; echo "[  FAILED  ] A.two (4 ms)"; }
  sleep 8
  exit 0
fi
[ -n "${FAKE_TOOL_HANGS:-}" ] && sleep 8
if [ -n "${FAKE_TOOL_FAILS:-}" ]; then
  echo "[  FAILED  ] A.one (3 ms)"; echo "[  FAILED  ] 1 test, listed below:"; exit 1
fi
echo "[       OK ] A.one (3 ms)"; echo "[  PASSED  ] 1 test."
BIN
cat >"$work/bin/compute-sanitizer" <<'BIN'
#!/usr/bin/env bash
[ "$1" = --version ] && { echo "stand-in compute-sanitizer"; exit 0; }
shift 4  # --tool T --error-exitcode 1
FAKE_UNDER_TOOL=1 "$@"
rc=$?
echo "========= ERROR SUMMARY: 0 errors"
exit $rc
BIN
chmod +x "$work/build/tests/normjit_gpu_tests" "$work/bin/compute-sanitizer"

failures=0
# expect NAME EXIT PATTERN [VAR=VALUE ...]: runs the script with those variables set.
expect() {
  local name="$1" want="$2" pattern="$3"
  shift 3
  local output rc
  output=$(env PATH="$work/bin:$PATH" BUILD_DIR="$work/build" OUT="$work/out" SANITIZE_TOOLS=memcheck \
             WARMUP_TIMEOUT=1 TIMEOUT_memcheck=2 "$@" "$src/scripts/gpu-sanitize.sh" 2>&1)
  rc=$?
  if [ "$rc" != "$want" ] || ! grep -q -- "$pattern" <<<"$output"; then
    echo "FAIL: $name: exit $rc (want $want), output lacks '$pattern':"
    echo "$output" | tail -4
    failures=$((failures + 1))
  else
    echo "ok: $name"
  fi
}
expect "warm-up stopped at its cap, tools clean" 0 "after 1 tests passed and 0 failed"
expect "a test failed in the stopped warm-up" 1 "and 1 failed; .*: FAILED" FAKE_WARMUP_FAILS=1
expect "a tool's test failed" 1 "memcheck: exit 1.*FAILED" FAKE_TOOL_FAILS=1
expect "a tool ran out of time" 1 "memcheck: exit 124.*TIMEOUT" FAKE_TOOL_HANGS=1
[ "$failures" -eq 0 ] && echo "gpu_sanitize_test: all passed" || echo "gpu_sanitize_test: $failures failed"
exit $((failures > 0))
