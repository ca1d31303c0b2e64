#!/usr/bin/env bash
# Times the same shapes with two normjit binaries, in turns, on the GPU machine: the A/B check
# a heuristic change needs (bench/NOTES.md entry 31). Each shape set runs with OLD, then NEW, then
# again (order effects), each with a fresh cache (no tuning database: the heuristic's configs);
# then bench/compare_bench.py prints each pair.
#
#   scripts/bench-ab.sh OLD_BIN NEW_BIN OUT_DIR NAME "BENCH ARGS" [NAME "BENCH ARGS" ...]
#   e.g. scripts/bench-ab.sh build-device/v/old build-device/normjit $w \
#          bwd "--graph --weights fp32 --dtypes bf16 --n 1280,1536" fwd "--forward --graph --n 320"
#
# Writes OUT_DIR/NAME-{old,new}{1,2}.{json,txt}. `OLD_REV=<commit> scripts/device-bundle.sh` puts
# that commit's normjit at build-device/v/old.
set -uo pipefail
if [ $# -lt 5 ] || [ $(( ($# - 3) % 2 )) -ne 0 ]; then
  sed -n '2,10p' "$0" >&2
  exit 2
fi
old=$1 new=$2 out=$3; shift 3
here=$(cd "$(dirname "$0")/.." && pwd)
sets=("$@")
for r in 1 2; do
  for i in $(seq 0 2 $(( ${#sets[@]} - 1 ))); do
    name=${sets[$i]} args=${sets[$((i + 1))]}
    for s in old new; do
      bin=$new; [ $s = old ] && bin=$old
      # shellcheck disable=SC2086  # the args are a word list on purpose
      NORMJIT_CACHE_DIR=$(mktemp -d) timeout 120 "$bin" bench $args --json "$out/$name-$s$r.json" > "$out/$name-$s$r.txt" 2>&1 ||
        echo "bench-ab: $name ($s, run $r) exited $?" >&2
    done
  done
done
for r in 1 2; do
  for i in $(seq 0 2 $(( ${#sets[@]} - 1 ))); do
    a=$out/${sets[$i]}-old$r.json b=$out/${sets[$i]}-new$r.json
    if [ -s "$a" ] && [ -s "$b" ]; then
      python3 "$here/bench/compare_bench.py" "$a" "$b" | cut -c1-190
    else
      echo "bench-ab: ${sets[$i]} run $r: no JSON to compare (see its .txt)" >&2
    fi
  done
done
