#!/usr/bin/env bash
# A profile's stall samples and instructions by line of the generated source: after
# scripts/ncu-profile.sh OUT_DIR NAME (its OUT_DIR/NAME-sass.csv), on the GPU machine or on any
# machine with NVRTC (the same NVRTC version gives the same machine code; bench/ncu_stalls.py
# warns when the sizes differ). The emit arguments name the kernel profiled: its problem and,
# unless the profile ran the heuristic's many-rows config, --config as `tune --list` prints it.
#
#   scripts/ncu-lines.sh OUT_DIR NAME [--kernel K] -- NORMJIT emit PROBLEM [--config C]
#   e.g. scripts/ncu-lines.sh $OUT/ncu ln1m -- build/normjit emit --kind layernorm --n 1048576 \
#          --dtype bf16 --weight-dtype fp32 --config "threads=512 ... grid staged stages=6 shared_weights"
#
# Writes OUT_DIR/NAME.cubin (with line tables), NAME.cu (the source) and NAME-lines.txt, and
# prints the lines' first rows.
set -uo pipefail
if [ $# -lt 4 ]; then
  sed -n '2,12p' "$0" >&2
  exit 2
fi
out=$1 name=$2 kernel=nj_norm_backward
shift 2
[ "$1" = --kernel ] && { kernel=$2; shift 2; }
[ "$1" = -- ] || { echo "ncu-lines.sh: expected -- before the emit command" >&2; exit 2; }
shift
here=$(cd "$(dirname "$0")/.." && pwd)
[ -f "$out/$name-sass.csv" ] || { echo "ncu-lines.sh: no $out/$name-sass.csv (run scripts/ncu-profile.sh first)" >&2; exit 2; }
"$@" --cubin "$out/$name.cubin" --line-info > /dev/null || exit 1
"$@" > "$out/$name.cu" || exit 1
python3 "$here/bench/ncu_stalls.py" "$out/$name-sass.csv" --lines "$out/$name.cubin" "$out/$name.cu" --kernel "$kernel" \
  --top 25 > "$out/$name-lines.txt" 2>&1
status=$?
head -15 "$out/$name-lines.txt"
exit $status
