#!/usr/bin/env bash
# Times launch configs pinned by hand (bench --graph --config, at each shape's own M) on the GPU
# machine: the "what would this config do" question a heuristic change starts from. Each config
# is timed beside the heuristic's own; one fresh cache, no tuning database.
#
#   scripts/bench-pin.sh OUT_DIR NAME "BENCH ARGS" CONFIG [CONFIG ...]
#   e.g. scripts/bench-pin.sh $OUT/logs ln16 "--forward --kinds layernorm --dtypes bf16 --n 65536" \
#          "threads=1024 threads_per_row=1024 vec=8 registers cluster=4 shared_weights"
#
# Writes OUT_DIR/NAME.{json,txt} and prints the table's rows, one line each. NORMJIT=<binary>
# picks the command (default build-device/normjit); PIN_TIMEOUT the seconds it may take (150).
set -uo pipefail
if [ $# -lt 4 ]; then
  sed -n '2,11p' "$0" >&2
  exit 2
fi
out=$1 name=$2 args=$3; shift 3
bin=${NORMJIT:-build-device/normjit}
cfg=()
for c in "$@"; do cfg+=(--config "$c"); done
mkdir -p "$out"
# shellcheck disable=SC2086  # the args are a word list on purpose
NORMJIT_CACHE_DIR=$(mktemp -d) timeout "${PIN_TIMEOUT:-150}" "$bin" bench --graph $args "${cfg[@]}" \
  --json "$out/$name.json" >"$out/$name.txt" 2>&1
echo "$name: exit $? at ${SECONDS}s"
grep -E "^(rms|layer)" "$out/$name.txt" | sed 's/  */ /g' | cut -d' ' -f1-2,5,7-26 | cut -c1-190
