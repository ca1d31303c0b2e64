#!/usr/bin/env bash
# On the GPU machine, from the repository root, with the build folder copied there: the standing
# sweep of both passes (bench --graph at the speed issue's N and its odd N, both kinds, bf16 and
# fp16 with fp32 and 16-bit γ, and fp32; M·N = 64 Mi) and of the fused options of both passes
# (bf16, fp32 γ, 4096-32768 and odd 4095), then each against a baseline run of the same device
# (bench/regressions.py), so that a change to a shared template cannot slow a pass or an option
# nobody timed (bench/NOTES.md entry 68: the forward ran 0.69-0.87x at 5120-7168 for six sessions).
#
#   BUILD_DIR=build-device OUT=$OUT scripts/gpu-standing.sh [BASELINE_DIR]
#
# Writes $OUT/standing-{backward,forward,fused-backward,fused-forward}.{json,txt} and, with
# BASELINE_DIR (a folder holding an earlier run's standing-*.json, e.g. a session's
# bench/results/<dir>/callN/), the checks' verdicts into $OUT/standing-check.txt. A pass with a
# slower shape is timed once more (standing-<pass>-again.*) and each shape's faster run counts.
# Exit status: non-zero when a bench failed or a shape got slower than the baseline by more than
# ${TOLERANCE:-0.03}. About 2.5 minutes on an H200 (more where a pass is timed again).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
build="${BUILD_DIR:-build}"
out="${OUT:-/tmp/normjit-out}"
baseline="${1:-}"
mkdir -p "$out"
n="256,512,1024,2048,4096,5120,7168,8192,12288,14336,16384,32768,65536,131072,262144,1048576,1000,4095,5003"
# The fused sets of issue 5 (docs/FUSED.md); the forward has no recompute.
fused_n="4096,8192,16384,32768,4095"
fused="none,residual,all,gate,gate-before,parallel,recompute"
time_pass() {  # time_pass SUFFIX: one run of the pass's sweep ($pass, $flags) into standing-$pass$SUFFIX.*
  NORMJIT_CACHE_DIR="$(mktemp -d)" timeout "${BENCH_TIMEOUT:-300}" "$build/normjit" bench "${flags[@]}" \
    --json "$out/standing-$pass$1.json" > "$out/standing-$pass$1.txt" 2>&1 || { echo "gpu-standing: $pass bench exited $?"; status=1; }
}
check() {  # check RUN...: the runs' fastest time per shape against the baseline's
  python3 bench/regressions.py --tolerance "${TOLERANCE:-0.03}" "$baseline/standing-$pass.json" "$@"
}
status=0
for pass in backward forward fused-backward fused-forward; do
  case "$pass" in
    backward) flags=(--graph --n "$n") ;;
    forward) flags=(--graph --n "$n" --forward) ;;
    fused-backward) flags=(--graph --n "$fused_n" --dtypes bf16 --weights fp32 --fused "$fused") ;;
    fused-forward) flags=(--graph --n "$fused_n" --dtypes bf16 --weights fp32 --fused "${fused%,recompute}" --forward) ;;
  esac
  time_pass ""
  if [ -n "$baseline" ]; then
    if [ -f "$baseline/standing-$pass.json" ]; then
      # A shape slow once may be the run's noise: a flagged pass is timed again and the faster
      # of its two runs counts (standing-$pass-again.json); both verdicts are kept.
      if ! check "$out/standing-$pass.json" >> "$out/standing-check.txt" 2>&1; then
        time_pass "-again"
        check "$out/standing-$pass.json" "$out/standing-$pass-again.json" >> "$out/standing-check.txt" 2>&1 || status=1
      fi
    else
      echo "gpu-standing: no $baseline/standing-$pass.json to check $pass against" >> "$out/standing-check.txt"
    fi
  fi
done
[ -f "$out/standing-check.txt" ] && cat "$out/standing-check.txt"
exit $status
