#!/usr/bin/env bash
# bench/regressions.py's verdicts on made-up bench --json runs (no GPU): a shape slower by more
# than the tolerance fails the check and is named, one within it passes, several runs of a build
# count each shape's fastest, and runs of another device or pass are refused.
# Usage: tests/scripts/regressions_test.sh REPO_ROOT
set -uo pipefail
root="${1:-$(cd "$(dirname "$0")/../.." && pwd)}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fail=0
run() {  # run NAME OLD NEW[,NEW2...] EXPECTED_STATUS [PATTERN]: runs the check, tests its status and output
  local name=$1 old=$2 new=$3 want=$4 pattern=${5:-} runs=()
  IFS=, read -r -a runs <<< "$new"
  python3 "$root/bench/regressions.py" "$tmp/$old" "${runs[@]/#/$tmp/}" > "$tmp/$name.out" 2>&1
  local got=$?
  if [ "$got" -ne "$want" ]; then
    echo "FAIL $name: exit $got, expected $want"; cat "$tmp/$name.out"; fail=1
  elif [ -n "$pattern" ] && ! grep -q -- "$pattern" "$tmp/$name.out"; then
    echo "FAIL $name: no '$pattern' in"; cat "$tmp/$name.out"; fail=1
  else
    echo "ok   $name"
  fi
}
row() {  # row N GRAPH_US [CONFIG]
  printf '{"kind":"rmsnorm","dtype":"bf16","weight_dtype":"fp32","m":%d,"n":%d,"us":%s,"graph_us":%s,"pct_copy":90,"config":"%s"}' \
    $((67108864 / $1)) "$1" "$2" "$2" "${3:-threads=320}"
}
run_json() {  # run_json FILE DEVICE PASS ROWS...
  local file=$1 device=$2 pass=$3
  shift 3
  local rows
  rows=$(IFS=,; echo "$*")
  printf '{"device":"%s","pass":"%s","copy_gbs":4000,"rows":[%s]}\n' "$device" "$pass" "$rows" > "$tmp/$file"
}
run_json base.json H200 forward "$(row 5120 69.2)" "$(row 8192 70.0)"
run_json same.json H200 forward "$(row 5120 70.0)" "$(row 8192 69.5)"
run_json slow.json H200 forward "$(row 5120 86.8 threads=320\ prefetch)" "$(row 8192 70.1)"
run_json h100.json H100 forward "$(row 5120 69.2)"
run_json bwd.json H200 backward "$(row 5120 69.2)"
run_json none.json H200 forward "$(row 4096 50.0)"
run within base.json same.json 0 "0 slower"
run slower base.json slow.json 1 "N=5120 M=13107: 69.2 -> 86.8 us (0.80x)"
run config base.json slow.json 1 "config threads=320 -> threads=320 prefetch"
run device base.json h100.json 2 "not comparable: device"
run pass base.json bwd.json 2 "not comparable: pass"
run disjoint base.json none.json 2 "no shape in common"
# Several runs of one build: each shape's fastest counts.
run fastest base.json slow.json,same.json 0 "(the fastest of 2 runs), tolerance 3%: 0 slower"
run fastest-slow base.json slow.json,slow.json 1 "N=5120 M=13107: 69.2 -> 86.8 us (0.80x)"
run runs-device base.json same.json,h100.json 2 "not comparable: device"
exit $fail
