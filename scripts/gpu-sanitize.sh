#!/usr/bin/env bash
# On the GPU machine: runs the backward kernels (and the forward's phased ones) under
# compute-sanitizer's memcheck, racecheck, initcheck and synccheck over the sanitize matrix of
# tests/gpu/backward_matrix_test.cpp (NORMJIT_TEST_MATRIX=sanitize: LayerNorm and RMSNorm x
# fp32, fp16, bf16 x N in {1, 33, 1000, 4096, 8192, 65536, 262144} x M in {1, 199, 4096}, M*N
# capped per tool),
# and over the fused-option tests (tests/gpu/backward_{fused,gated,parallel}_test.cpp,
# '*BackwardFused*:*BackwardGated*:*BackwardParallel*') and the
# grid-cluster tests (tests/gpu/backward_grid_test.cpp, 'BackwardGridCluster*', N = 1M rows),
# and the configs of M = 199 and 4096 run over two row groups ('*BackwardFewGroups*': one test per N,
# and every variant at three N), and the phased rows of both passes (odd 16-bit rows read as
# aligned chunks: 'ForwardTuning.PhasedRowsMatchTheReference:BackwardPhasedRows.*:Tuning.Phased*';
# their whole-chunk loads read past x at N = 3 until session 43, and only a forward run found it).
# Which tests each tool runs (the gtest filter per tool, below): memcheck and synccheck all
# five; initcheck and racecheck all but the grid-cluster and phased tests (racecheck
# tracks every shared-memory access, and the grid tests' rows of 1M elements staged through
# shared memory would take it far past its time). SANITIZE_FILTER_<tool>='...' replaces a
# tool's filter (SANITIZE_FILTER_racecheck='BackwardGridCluster*', say, to try the grid tests).
# Builds nothing: uses the build folder that travels with the call. Everything goes to ONE
# file, $OUT/sanitize.txt, ending with one summary line per tool. Exit 0 only when every tool
# ran to the end with 0 errors and every test passed; 1 otherwise (a tool that runs past its
# time limit counts as a failure: the matrix was not covered; the warm-up stopped at its cap
# does not, unless a test failed in it: tests/scripts/gpu_sanitize_test.sh checks these).
#   usage: scripts/gpu-sanitize.sh                   all four tools, 12 minutes at most: more than one device call allows, so run racecheck in a call of its own (SANITIZE_TOOLS)
#          SANITIZE_TOOLS="memcheck" scripts/gpu-sanitize.sh
#          SANITIZE_DRY_RUN=1 scripts/gpu-sanitize.sh  print the commands and the test list only
#          SANITIZE_WARMUP=0 scripts/gpu-sanitize.sh   no plain warm-up run: each tool compiles its own
#            kernels (NVRTC is host code, the tools check the kernels the same). For wide filters,
#            whose warm-up alone outlasts a device call (the fused tests: ~400 s plain, 2026-11-24)
#   BUILD_DIR (default build), OUT (default /tmp/normjit-out), SANITIZE_TIMEOUT (seconds per
#   tool for every tool; default per tool: memcheck 150 (110 before the phased tests), racecheck 240 (118 s over the matrix and the fused tests at d522da5), initcheck 80, synccheck
#   150, plus 120 for the warm-up: 12 minutes in the worst case), TIMEOUT_<tool>=S for one tool,
#   WARMUP_TIMEOUT=S for the warm-up (default 120; the gated tests alone compile for ~70 s),
#   CAP_<tool>=N to change a tool's M*N cap of the matrix (CAP_racecheck=16384, say, if racecheck
#   runs out of time; the per-option fused tests take the same cap; the fused families and the
#   grid tests have fixed shapes and no cap).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
build="${BUILD_DIR:-build}"
out="${OUT:-/tmp/normjit-out}"
mkdir -p "$out"
log="$out/sanitize.txt"
dry_run="${SANITIZE_DRY_RUN:-0}"
read -r -a tools <<<"${SANITIZE_TOOLS:-memcheck racecheck initcheck synccheck}"
tests="$build/tests/normjit_gpu_tests"
matrix_filter='AllVariants/BackwardMatrix.*'
fused_filter='*BackwardFused*:*BackwardGated*:*BackwardParallel*'
grid_filter='BackwardGridCluster*'
# The configs of M = 199 and 4096 over two row groups at small M (tests/gpu/
# backward_few_groups_test.cpp): every block works its rows in a loop within racecheck's cap;
# also every variant (weights in x's dtype, every affine form) at N = 33, 4096, 65536.
few_groups_filter='*BackwardFewGroups*'
phased_filter='ForwardTuning.PhasedRowsMatchTheReference:BackwardPhasedRows.*:Tuning.PhasedRowsInEveryBlockShapeMatchTheReference'
all_filter="$matrix_filter:$fused_filter:$grid_filter:$few_groups_filter:$phased_filter"
warmup_timeout="${WARMUP_TIMEOUT:-120}"  # the plain run that compiles every kernel first (the fused families take longest)

# M*N caps. A first run on the H100 (2026-11-22) with caps of 2^20 / 2^16 / 2^18 / 2^20 took
# 4, 21, 3 and 3 s per tool, so they were raised: memcheck and synccheck at 2^24 cover every
# (M, N) pair of the matrix up to 4096 x 4096 and 199 x 65536; initcheck at 2^22 keeps
# M = 199 up to N = 8192 and M = 4096 up to N = 1000; racecheck, the slowest (it tracks every
# shared-memory access, and the reductions and stages are all shared memory), at 2^18 keeps
# M = 199 up to N = 1000. M = 1 runs every N whatever the cap (a single row of 262144 takes the
# staged-cluster path). The configs of the larger M run too, over two row groups and a few rows
# each (BackwardFewGroups, not capped: at most 6 rows a block's slot).
cap_for() {
  case "$1" in
    memcheck) echo "${CAP_memcheck:-16777216}" ;;
    racecheck) echo "${CAP_racecheck:-262144}" ;;
    initcheck) echo "${CAP_initcheck:-4194304}" ;;
    synccheck) echo "${CAP_synccheck:-16777216}" ;;
    *) echo "gpu-sanitize: unknown tool '$1' (memcheck, racecheck, initcheck, synccheck)" >&2; exit 2 ;;
  esac
}
for t in "${tools[@]}"; do cap_for "$t" >/dev/null; done

# The gtest filter of each tool (see the top of the file for why racecheck and initcheck leave
# the grid tests out).
filter_for() {
  local override="SANITIZE_FILTER_$1"
  if [ -n "${!override:-}" ]; then echo "${!override}"; return; fi
  case "$1" in
    memcheck | synccheck) echo "$all_filter" ;;
    racecheck | initcheck) echo "$matrix_filter:$fused_filter:$few_groups_filter" ;;
  esac
}
# Seconds each tool may run: SANITIZE_TIMEOUT for all, else TIMEOUT_<tool>, else its default.
# The defaults leave room for the fused and grid tests on an H100; lower a tool's cap or filter
# rather than raising these past the device machine's 10 minutes per command.
timeout_for() {
  local override="TIMEOUT_$1"
  if [ -n "${SANITIZE_TIMEOUT:-}" ]; then echo "$SANITIZE_TIMEOUT"; return; fi
  if [ -n "${!override:-}" ]; then echo "${!override}"; return; fi
  case "$1" in
    memcheck | synccheck) echo 150 ;;  # 110 before the phased tests (unmeasured with them)
    racecheck) echo 240 ;;
    initcheck) echo 80 ;;
  esac
}
# The warm-up runs every test any tool will run (the union of the filters, deduplicated), at
# the largest of their M*N caps.
warm_cap=$(for t in "${tools[@]}"; do cap_for "$t"; done | sort -n | tail -1)
warmup_filter=$(for t in "${tools[@]}"; do filter_for "$t" | tr ':' '\n'; done | awk 'NF && !seen[$0]++' | paste -sd:)

sanitizer="$(command -v compute-sanitizer || true)"
for candidate in /usr/local/cuda/bin/compute-sanitizer /usr/local/cuda/compute-sanitizer/compute-sanitizer; do
  [ -z "$sanitizer" ] && [ -x "$candidate" ] && sanitizer="$candidate"
done

# Kernels are compiled once, by the plain run below, into this cache; the sanitized runs load
# them from disk, so their time goes to the kernels, not to NVRTC.
NORMJIT_CACHE_DIR="$(mktemp -d)"
export NORMJIT_CACHE_DIR NORMJIT_TEST_MATRIX=sanitize
trap 'rm -rf "$NORMJIT_CACHE_DIR"' EXIT

if [ "$dry_run" = 1 ]; then
  echo "compute-sanitizer: ${sanitizer:-NOT FOUND (needed on the GPU machine)}"
  if [ "${SANITIZE_WARMUP:-1}" = 0 ]; then
    echo "warm-up: skipped (SANITIZE_WARMUP=0)"
  else
    echo "warm-up: NORMJIT_TEST_MAX_ELEMENTS=$warm_cap" \
         "timeout $warmup_timeout $tests --gtest_filter='$warmup_filter'"
  fi
  for t in "${tools[@]}"; do
    echo "$t: NORMJIT_TEST_MAX_ELEMENTS=$(cap_for "$t") timeout $(timeout_for "$t") ${sanitizer:-compute-sanitizer}" \
         "--tool $t --error-exitcode 1 $tests --gtest_filter='$(filter_for "$t")'"
  done
  echo "tests selected (warm-up; each tool runs those its filter selects):"
  NORMJIT_TEST_MAX_ELEMENTS=1 "$tests" --gtest_list_tests --gtest_filter="$warmup_filter"
  exit $?
fi

{
  echo "normjit gpu-sanitize: $(date -u +%Y-%m-%dT%H:%M:%SZ), commit $(cat "$build/COMMIT" 2>/dev/null || git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1
  echo "compute-sanitizer: ${sanitizer:-NOT FOUND}"
  [ -n "$sanitizer" ] && "$sanitizer" --version 2>&1 | tail -2
  echo "matrix: NORMJIT_TEST_MATRIX=sanitize; per-tool filters, M*N caps of the matrix and reasons in scripts/gpu-sanitize.sh:"
  for t in "${tools[@]}"; do
    echo "  $t: --gtest_filter='$(filter_for "$t")', matrix M*N <= $(cap_for "$t") (M = 1: every N), at most $(timeout_for "$t") s"
  done
} >"$log"

summaries=()
status=0
if [ -z "$sanitizer" ]; then
  echo "gpu-sanitize: compute-sanitizer not found on PATH or in /usr/local/cuda: install the CUDA toolkit's" \
       "compute-sanitizer or put it on PATH" | tee -a "$log" >&2
  exit 1
fi

# gtest's own verdict: "[  PASSED  ] N tests." and "[  FAILED  ] N tests," lines.
gtest_counts() {  # log section file -> "passed P, failed F, skipped S"
  local p f s
  p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) tests\{0,1\}\..*/\1/p' "$1" | tail -1)
  f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) tests\{0,1\}, listed below:.*/\1/p' "$1" | tail -1)
  s=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) tests\{0,1\}, listed below:.*/\1/p' "$1" | tail -1)
  echo "gtest passed ${p:-0}, failed ${f:-0}, skipped ${s:-0}"
}

# --- warm-up: every kernel compiled into the cache, and the matrix correct without a sanitizer
section="$(mktemp)"
if [ "${SANITIZE_WARMUP:-1}" = 0 ]; then
  echo "===== warm-up skipped (SANITIZE_WARMUP=0): each tool compiles its own kernels =====" >>"$log"
  summaries+=("warm-up: skipped (SANITIZE_WARMUP=0)")
else
  start=$SECONDS
  echo "===== warm-up (no sanitizer), M*N <= $warm_cap =====" >>"$log"
  NORMJIT_TEST_MAX_ELEMENTS="$warm_cap" timeout "$warmup_timeout" "$tests" --gtest_filter="$warmup_filter" >"$section" 2>&1
  rc=$?
  cat "$section" >>"$log"
  line="warm-up: exit $rc, $(gtest_counts "$section"), $((SECONDS - start)) s"
  if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
    # Stopped at its cap: the kernels it did not reach are compiled by each tool's own run, and
    # a tool's verdict does not depend on it; only a test that failed before the cap fails it.
    # (gtest prints no totals when stopped: count the tests' own lines.)
    passed=$(grep -c '^\[       OK \] ' "$section")
    failed=$(grep -c '^\[  FAILED  \] .*([0-9]* ms)' "$section")
    line="$line: stopped at its $warmup_timeout s (WARMUP_TIMEOUT) after $passed tests passed and $failed failed;"
    line="$line the tools compile what it did not reach"
    [ "$failed" -eq 0 ] || { status=1; line="$line: FAILED"; }
  elif [ $rc -ne 0 ]; then
    status=1
    line="$line: FAILED"
  fi
  grep -q "^\[  SKIPPED \]" "$section" && { status=1; line="$line: tests SKIPPED (no GPU?)"; }
  summaries+=("$line")
fi

# --- the tools
for t in "${tools[@]}"; do
  cap=$(cap_for "$t")
  tool_timeout=$(timeout_for "$t")
  tool_filter=$(filter_for "$t")
  start=$SECONDS
  echo "===== $t, --gtest_filter='$tool_filter', matrix M*N <= $cap =====" >>"$log"
  NORMJIT_TEST_MAX_ELEMENTS="$cap" timeout --kill-after=10 "$tool_timeout" \
    "$sanitizer" --tool "$t" --error-exitcode 1 "$tests" --gtest_filter="$tool_filter" >"$section" 2>&1
  rc=$?
  cat "$section" >>"$log"
  # "========= ERROR SUMMARY: 0 errors"; racecheck: "RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)".
  errors=$(sed -n 's/^========= ERROR SUMMARY: \([0-9]*\) errors\{0,1\}.*/\1/p' "$section" | tail -1)
  hazards=$(sed -n 's/^========= RACECHECK SUMMARY: \(.*\)$/\1/p' "$section" | tail -1)
  # racecheck prints no ERROR SUMMARY: its error count is the one inside the hazards line.
  if [ -z "$errors" ] && [ -n "$hazards" ]; then
    errors=$(printf '%s\n' "$hazards" | sed -n 's/.*(\([0-9]*\) errors\{0,1\}.*/\1/p')
  fi
  line="$t: exit $rc, ${errors:-?} errors${hazards:+ (racecheck: $hazards)}, $(gtest_counts "$section"), M*N <= $cap, $((SECONDS - start)) s"
  if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
    line="$line: TIMEOUT after $tool_timeout s, tests not covered (lower CAP_$t, narrow SANITIZE_FILTER_$t or raise TIMEOUT_$t)"
    status=1
  elif [ $rc -ne 0 ] || [ "${errors:-x}" != 0 ] || grep -q "^\[  FAILED  \]" "$section"; then
    line="$line: FAILED"
    status=1
  elif grep -q "^\[  SKIPPED \]" "$section"; then
    line="$line: tests SKIPPED (no GPU?)"
    status=1
  else
    line="$line: ok"
  fi
  summaries+=("$line")
done
rm -f "$section"

{
  echo "===== summary ====="
  for s in "${summaries[@]}"; do echo "sanitize: $s"; done
  echo "sanitize: $([ $status -eq 0 ] && echo "all clean" || echo "FAILED")"
} | tee -a "$log"
exit $status
