#!/usr/bin/env bash
# scripts/gpu-standing.sh's flow with a stand-in normjit (no GPU): it writes every pass's JSON,
# checks each against the baseline, times a flagged pass once more and counts each shape's
# faster run, and fails only where both runs are slower. Usage: tests/scripts/gpu_standing_test.sh REPO_ROOT
set -uo pipefail
root="${1:-$(cd "$(dirname "$0")/../.." && pwd)}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fail=0
mkdir -p "$tmp/build" "$tmp/baseline"
# The stand-in: `bench ... --json FILE` writes one shape whose time is the next line of
# $tmp/times (one line a call; the last repeats), for the pass --forward names.
cat > "$tmp/build/normjit" <<'STUB'
#!/usr/bin/env bash
json="" pass=backward
while [ $# -gt 0 ]; do
  case "$1" in
    --json) json=$2; shift ;;
    --forward) pass=forward ;;
  esac
  shift
done
times="$STANDING_TEST_DIR/times"
us=$(head -n 1 "$times")
[ "$(wc -l < "$times")" -gt 1 ] && sed -i 1d "$times"
printf '{"device":"stub","pass":"%s","copy_gbs":4000,"rows":[{"kind":"rmsnorm","dtype":"bf16","weight_dtype":"fp32","m":16384,"n":4096,"us":%s,"graph_us":%s,"pct_copy":90,"config":"threads=128"}]}\n' \
  "$pass" "$us" "$us" > "$json"
STUB
chmod +x "$tmp/build/normjit"
# The baseline: the stub's own runs at 100 µs.
echo 100 > "$tmp/times"
for pass in backward forward fused-backward fused-forward; do
  forward=(); case $pass in *forward) forward=(--forward) ;; esac
  STANDING_TEST_DIR="$tmp" "$tmp/build/normjit" bench "${forward[@]}" --json "$tmp/baseline/standing-$pass.json"
done
run() {  # run NAME EXPECTED_STATUS PATTERN TIMES...: the times the stub gives, call by call
  local name=$1 want=$2 pattern=$3
  shift 3
  printf '%s\n' "$@" > "$tmp/times"
  rm -rf "$tmp/out"
  STANDING_TEST_DIR="$tmp" BUILD_DIR="$tmp/build" OUT="$tmp/out" bash "$root/scripts/gpu-standing.sh" "$tmp/baseline" \
    > "$tmp/$name.out" 2>&1
  local got=$?
  if [ "$got" -ne "$want" ]; then
    echo "FAIL $name: exit $got, expected $want"; cat "$tmp/$name.out"; fail=1
  elif ! grep -q -- "$pattern" "$tmp/$name.out"; then
    echo "FAIL $name: no '$pattern' in"; cat "$tmp/$name.out"; fail=1
  else
    echo "ok   $name"
  fi
}
# Within the tolerance: four passes, one run each, no re-timing.
run steady 0 "tolerance 3%: 0 slower" 101
[ -e "$tmp/out/standing-backward-again.json" ] && { echo "FAIL steady: a pass within the tolerance was timed again"; fail=1; }
# Slow once in the first pass, then as fast as the baseline: cleared by its second run.
run noise 0 "(the fastest of 2 runs), tolerance 3%: 0 slower" 110 100
# Slower twice: named, and the check fails.
run slower 1 "N=4096 M=16384: 100.0 -> 110.0 us (0.91x)" 110
exit $fail
