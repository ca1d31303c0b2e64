#!/usr/bin/env bash
# Session 52, call 5 (H200). build-device at the fix for RMSNorm's short rows in phase (their
# blocks whatever the twin's shape; from 936); v/old = 0e30e0d's normjit (call 4's new). A/B,
# bench --graph, M·N = 64 Mi, two rounds: RMSNorm's rows in phase of 935-1023 (935 and 1023
# controls: 935 keeps its warp a row, 1023's twin was one block already), bf16 fp32 γ and fp16.
set -uo pipefail
B=build-device
mkdir -p $OUT/ab
N=935,937,967,999,1001,1009,1017,1023
scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab \
  rms "--graph --kinds rmsnorm --dtypes bf16,fp16 --weights fp32 --n $N" > $OUT/ab.txt 2>&1
echo "ab exit $? at $SECONDS s"; grep -E "^(layer|rms)|median" $OUT/ab.txt | sed -E 's/threads_per_row=[0-9]+ //; s/registers //; s/shared_weights //' | cut -c1-150
tar czf $OUT/call5-logs.tgz -C $OUT ab ab.txt 2>/dev/null; rm -rf $OUT/ab
