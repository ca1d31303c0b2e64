#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz with clang (ASan + UBSan + libFuzzer coverage)
# into ${FUZZ_BUILD_DIR:-build-fuzz}/ and runs each for ${FUZZ_SECONDS:-60} seconds, seeded
# from tests/fuzz/corpus/<target>/ plus freshly generated valid entries. Exits non-zero if any
# target crashes, trips a sanitizer, breaks one of its checks, runs out of memory (2 GiB) or
# hangs on one input (${FUZZ_TIMEOUT:-25} s). What a run adds to the corpus stays in a temporary
# directory (removed); a failing input is kept under $build/artifacts/ with the command that
# replays it. Installs clang and its libFuzzer runtime when missing (Debian/Ubuntu).
#   FUZZ_SECONDS=600 scripts/fuzz.sh            longer runs
#   FUZZ_TARGETS="config" scripts/fuzz.sh       some targets only
#                     (config disk_cache kernel_cache cache_bundle shape_file tuning_db)
# Six targets, ${FUZZ_PARALLEL:-6} at a time: on the 2-core CI machine one round of 60 s, each
# target with a third of a core (a third of the inputs one core would run). Three at a time
# (two rounds, two thirds of a core each) took a minute more: CI ran 936 s in all with them,
# over its 15-minute line, before the sanitizer build went to -O0 (2026-11-24).
set -euo pipefail
cd "$(dirname "$0")/.."
build="${FUZZ_BUILD_DIR:-build-fuzz}"
seconds="${FUZZ_SECONDS:-60}"
read -r -a targets <<<"${FUZZ_TARGETS:-config disk_cache kernel_cache cache_bundle shape_file tuning_db}"
jobs="${JOBS:-$(nproc)}"
export PATH="/usr/local/cuda/bin:$PATH"

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# --- clang with libFuzzer -------------------------------------------------------------------
can_fuzz() {
  command -v clang++ >/dev/null || return 1
  printf 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }\n' \
    >"$tmp/probe.cpp"
  clang++ -fsanitize=fuzzer,address,undefined "$tmp/probe.cpp" -o "$tmp/probe" >/dev/null 2>&1
}
apt_install() {
  echo "fuzz: installing $*"
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@"
}
if ! can_fuzz; then
  command -v clang++ >/dev/null || apt_install clang
  # Debian 12 ships libFuzzer and the sanitizer runtimes apart from clang: libclang-rt-14-dev.
  can_fuzz || apt_install "libclang-rt-$(clang++ -dumpversion | cut -d. -f1)-dev"
  can_fuzz || { echo "fuzz: clang++ cannot link -fsanitize=fuzzer,address,undefined" >&2; exit 1; }
fi

# --- build ------------------------------------------------------------------------------------
start=$SECONDS
CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g" \
  -DNORMJIT_FUZZ=ON -DNORMJIT_BUILD_TESTS=OFF -DNORMJIT_SANITIZE=OFF >/dev/null
cmake --build "$build" -j "$jobs" --target normjit_fuzz
echo "fuzz: built in $((SECONDS - start)) s"

# --- run --------------------------------------------------------------------------------------
artifacts="$PWD/$build/artifacts"
mkdir -p "$artifacts"
"$build/tests/fuzz/normjit_fuzz_seeds" "$tmp/seeds"
# Every sanitizer report is fatal (the build also has -fno-sanitize-recover=all).
export ASAN_OPTIONS="halt_on_error=1:detect_leaks=1:allocator_may_return_null=0"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
export TMPDIR="$tmp"  # a target's own scratch files, removed with the rest

run_one() {  # target: libFuzzer's output in $tmp/<target>.log, its exit status in $tmp/<target>.rc
  local t="$1" rc=0
  mkdir -p "$tmp/corpus/$t"
  local seeds=("tests/fuzz/corpus/$t")
  [ -d "$tmp/seeds/$t" ] && seeds+=("$tmp/seeds/$t")
  # The first directory receives what the run finds; the seed directories are only read.
  "$build/tests/fuzz/normjit_fuzz_$t" -max_total_time="$seconds" -timeout="${FUZZ_TIMEOUT:-25}" \
    -rss_limit_mb=2048 -malloc_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
    -artifact_prefix="$artifacts/$t-" "$tmp/corpus/$t" "${seeds[@]}" >"$tmp/$t.log" 2>&1 || rc=$?
  echo "$rc" >"$tmp/$t.rc"
}

start=$SECONDS
# Every target at once (FUZZ_PARALLEL); each still gets its full $seconds of wall time.
parallel="${FUZZ_PARALLEL:-6}"
for ((i = 0; i < ${#targets[@]}; i += parallel)); do
  for t in "${targets[@]:i:parallel}"; do run_one "$t" & done
  wait
done
failed=()
passed=0
for t in "${targets[@]}"; do
  if [ "$(cat "$tmp/$t.rc" 2>/dev/null)" = 0 ]; then
    passed=$((passed + 1))
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$tmp/$t.log")
    cov=$(grep -o 'cov: [0-9]*' "$tmp/$t.log" | tail -1 || true)
    echo "fuzz: $t: ok, ${runs:-?} inputs in ${seconds} s (${cov:-cov: ?}), corpus $(find "$tmp/corpus/$t" -type f | wc -l) files"
  else
    failed+=("$t")
    echo "fuzz: $t: FAILED (exit status $(cat "$tmp/$t.rc" 2>/dev/null || echo '?')); its report:"
    # The report's first 50 lines (a stack overflow's stack is thousands), then the end.
    grep -v -E '^#[0-9]+' "$tmp/$t.log" |
      awk '/ERROR:|runtime error:|deadly signal|Assertion|terminate called|_fuzz: / && !n { n = 1 } n && n++ <= 50' || true
    echo "  ..."
    grep -v -E '^#[0-9]+|^ +#[0-9]+ ' "$tmp/$t.log" | tail -12 || true
    artifact=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$tmp/$t.log" | tail -1)
    [ -n "$artifact" ] && echo "fuzz: $t: replay with: $build/tests/fuzz/normjit_fuzz_$t $artifact"
  fi
done
echo "fuzz: ran ${#targets[@]} targets in $((SECONDS - start)) s"
echo "fuzz: ${passed} passed, ${#failed[@]} failed${failed:+ (${failed[*]})}"
[ ${#failed[@]} -eq 0 ]
