#!/usr/bin/env bash
# On the GPU machine: Nsight Compute (--set full, stall sampling by SASS line) of the first
# launch of a kernel in a normjit command, its details page, its SASS with stall samples, and
# bench/ncu_stalls.py's summary of them (stall reasons, the most-sampled instructions).
#
#   scripts/ncu-profile.sh OUT_DIR NAME [--kernel K] -- COMMAND...
#   K: the kernel's name (default nj_norm_backward; the forward's is nj_norm_forward).
#   e.g. scripts/ncu-profile.sh $OUT/ncu ln-recompute -- build-device/normjit tune --kind layernorm \
#          --dtype bf16 --weight-dtype fp32 --n 8192 --m 8192 --recompute-from-output
#   (`normjit tune` launches the heuristic's candidate first; `bench --fused X` launches the
#   option-free row first, so `-c 1` would catch that one.)
#
# NCU_CACHE_DIR: a normjit cache dir to run with (e.g. holding a tuning.toml, so the command
# launches a tuned config); default a fresh one (the heuristic's configs).
# Writes OUT_DIR/NAME-{run.txt,details.txt,sass.csv,stalls.txt,mix.txt} (the .ncu-rep is left out:
# large), and prints the details' headline metrics. scripts/ncu-lines.sh then reads NAME-sass.csv
# by line of the generated source (here or on any machine with the same NVRTC).
set -uo pipefail
if [ $# -lt 4 ]; then
  sed -n '2,14p' "$0" >&2
  exit 2
fi
out=$1 name=$2 kernel=nj_norm_backward
shift 2
[ "$1" = --kernel ] && { kernel=$2; shift 2; }
[ "$1" = -- ] || { echo "ncu-profile.sh: expected -- before the command" >&2; exit 2; }
shift
here=$(cd "$(dirname "$0")/.." && pwd)
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
mkdir -p "$out"
report=$(mktemp -d)/$name
NORMJIT_CACHE_DIR=${NCU_CACHE_DIR:-$(mktemp -d)} timeout 120 "$ncu" --set full --clock-control none --import-source no -k "$kernel" -c 1 -f -o "$report" "$@" \
  > "$out/$name-run.txt" 2>&1 || echo "ncu-profile.sh: ncu exited $? (see $out/$name-run.txt)" >&2
"$ncu" --import "$report.ncu-rep" --page details > "$out/$name-details.txt" 2>&1
"$ncu" --import "$report.ncu-rep" --page source --csv --print-source sass > "$out/$name-sass.csv" 2>&1
python3 "$here/bench/ncu_stalls.py" "$out/$name-sass.csv" --top 20 > "$out/$name-stalls.txt" 2>&1
python3 "$here/bench/ncu_stalls.py" "$out/$name-sass.csv" --mix > "$out/$name-mix.txt" 2>&1
grep -E "Block Size|Duration|DRAM Throughput|L1/TEX Cache Throughput|Achieved Occupancy|No Eligible|Issued Warp|Registers Per" \
  "$out/$name-details.txt" | cut -c1-120
