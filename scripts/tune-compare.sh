#!/usr/bin/env bash
# On the GPU machine: exhaustive tuning of some shapes, then bench --graph with the tuning
# database (tuned) against a fresh cache (the heuristic) on the shapes' N, and
# bench/compare_bench.py's table of the two: the data a heuristic rule is fitted to (nothing is
# adopted from it unmeasured: a rule needs its own A/B, scripts/bench-ab.sh).
#
#   scripts/tune-compare.sh OUT_DIR [--forward] [--until S] SHAPE... [-- EXTRA BENCH ARGS]
#   SHAPE: kind:dtype:n[:FUSED], e.g. layernorm:bf16:5120 (16-bit x with fp32 γ; fp32 rows with
#   fp32 γ), tuned at M = 64 Mi / n. FUSED: one of bench --fused's option sets (residual, gate,
#   parallel, recompute, all, residual+rowscale, ...), which tune takes as --fused FUSED;
#   bench then times --fused none,FUSED...
#   --until S: no new shape once the script has run S seconds (default 300).
#   Each shape is tuned at the alignment bench's contiguous rows of that N have (the largest
#   power of two up to 16 dividing the row's bytes: 2 for odd 16-bit N, 8 for N ≡ 4 mod 8), so
#   the database's entries are the ones bench then looks up.
#   e.g. scripts/tune-compare.sh $OUT/tune --forward layernorm:bf16:5120 rmsnorm:fp32:65536
#        scripts/tune-compare.sh $OUT/fused layernorm:bf16:8192:residual rmsnorm:bf16:8192:gate
#
# Writes OUT_DIR/tune.txt (tune's table and its fit lines), tune.err, heuristic.{json,txt},
# tuned.{json,txt}, compare.txt. BUILD_DIR (default build) holds the normjit command.
set -uo pipefail
if [ $# -lt 2 ]; then
  sed -n '2,20p' "$0" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")/.." && pwd)
bin="${BUILD_DIR:-build}/normjit"
out=$1
shift
forward=() until=300 shapes=() extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --forward) forward=(--forward) ;;
    --until) until=$2; shift ;;
    --) shift; extra=("$@"); break ;;
    *:*:*) shapes+=("$1") ;;
    *) echo "tune-compare.sh: '$1' is not a SHAPE (kind:dtype:n[:fused])" >&2; exit 2 ;;
  esac
  shift
done
[ ${#shapes[@]} -gt 0 ] || { echo "tune-compare.sh: no SHAPE given" >&2; exit 2; }
mkdir -p "$out"
db=$(mktemp -d)
kinds="" dtypes="" ns="" fused=""
for s in "${shapes[@]}"; do
  IFS=: read -r kind dtype n set <<<"$s"
  options=()
  if [ -n "$set" ]; then
    options=(--fused "$set")  # bench --fused's names, which tune's problem flags take too
    fused="$fused,$set"
  fi
  kinds="$kinds,$kind" dtypes="$dtypes,$dtype" ns="$ns,$n"
  if [ $SECONDS -ge "$until" ]; then echo "tune-compare.sh: out of time before $s" | tee -a "$out/tune.err"; continue; fi
  weight=(); [ "$dtype" != fp32 ] && weight=(--weight-dtype fp32)
  row_bytes=$((n * $([ "$dtype" = fp32 ] && echo 4 || echo 2))) align=16
  while [ $((row_bytes % align)) -ne 0 ]; do align=$((align / 2)); done
  NORMJIT_CACHE_DIR=$db timeout 60 "$bin" tune "${forward[@]}" --kind "$kind" --dtype "$dtype" "${weight[@]}" "${options[@]}" --n "$n" \
    --align "$align" --m $((67108864 / n)) --exhaustive >>"$out/tune.txt" 2>>"$out/tune.err" ||
    echo "tune-compare.sh: tuning $s exited $?" | tee -a "$out/tune.err"
done
uniq_list() { tr , '\n' <<<"${1#,}" | awk 'NF && !seen[$0]++' | paste -sd, -; }
args=("${forward[@]}" --graph --kinds "$(uniq_list "$kinds")" --dtypes "$(uniq_list "$dtypes")" --weights fp32
      --n "$(uniq_list "$ns")" "${extra[@]}")
[ -n "$fused" ] && args+=(--fused "none,$(uniq_list "$fused")")
NORMJIT_CACHE_DIR=$(mktemp -d) timeout 120 "$bin" bench "${args[@]}" --json "$out/heuristic.json" >"$out/heuristic.txt" 2>&1
NORMJIT_CACHE_DIR=$db timeout 120 "$bin" bench "${args[@]}" --json "$out/tuned.json" >"$out/tuned.txt" 2>&1
if [ ! -s "$out/heuristic.json" ] || [ ! -s "$out/tuned.json" ]; then
  echo "tune-compare.sh: bench wrote no JSON to compare (see $out/heuristic.txt, $out/tuned.txt)" >&2
  exit 1
fi
python3 "$here/bench/compare_bench.py" "$out/heuristic.json" "$out/tuned.json" >"$out/compare.txt" 2>&1
status=$?
cut -c1-200 "$out/compare.txt"
exit $status
