#!/usr/bin/env bash
# Session 37, call 1 (H200), build-device = the commit of this script. Do long 16-bit rows
# (LN/RMS bf16, fp32 γ, 16384-262144, M = 64 Mi / N) run faster staged than held in registers
# once the staged clusters keep more rows in flight (3-4 stages, a block or two an SM, many
# rows)? The search space stages them only with 2 stages and below 1024 rows. Each shape's
# heuristic config is timed beside the staged configs of configs/KIND-N.txt (made by
# configs/gen.sh: clusters of the smallest size that stages a slice of ≤ 2048 slots and 2x, 4x
# it; 1 or 2 slots a thread; 2-4 stages; sums in registers or shared; 1 or 2 blocks an SM; only
# those that fit shared memory and that ptxas compiles without spilling), by
# `normjit tune --config` (each config with the final repetitions; the database untouched).
set -uo pipefail
B=build-device/normjit
R=bench/results/2026-11-29-h200-staged-long-probe/configs
probe() {  # kind n
  [ $SECONDS -lt 480 ] || { echo "out of time before $*"; return; }
  local args=()
  while read -r c; do args+=(--config "$c"); done < $R/$1-$2.txt
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 120 $B tune --kind $1 --dtype bf16 --weight-dtype fp32 --n $2 \
    --m $((67108864 / $2)) "${args[@]}" >>$OUT/probe.txt 2>>$OUT/probe.err
  echo "$* exit $? at $SECONDS s"
}
for n in 32768 65536 16384 131072; do probe layernorm $n; probe rmsnorm $n; done
probe rmsnorm 262144
# Per shape: the heuristic's time, then the five fastest staged configs.
python3 - $OUT/probe.txt <<'PY'
import sys, collections
rows = collections.defaultdict(list)
for line in open(sys.argv[1]):
    if line.startswith("  config "):
        shape, config, us = [f.strip() for f in line[len("  config "):].split("|")]
        rows[shape].append((config, us))
for shape, cs in rows.items():
    heur = cs[0]
    timed = sorted((float(us), c) for c, us in cs[1:] if not us.startswith("failed"))
    print("%s\n  heuristic %8s  %s" % (shape, heur[1][:8], heur[0]))
    for us, c in timed[:5]:
        print("  staged    %8.2f  %s  (%.3fx)" % (us, c, float(heur[1]) / us))
    failed = [c for c, us in cs[1:] if us.startswith("failed")]
    if failed: print("  failed: %d" % len(failed))
PY
echo "done at $SECONDS s"
