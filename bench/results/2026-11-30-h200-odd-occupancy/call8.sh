#!/usr/bin/env bash
# Session 54, call 8 (H200). build-device as call 7; v/dae = dae4f23's normjit (session 45's
# call 3, whose bench-forward read LN bf16 fp32 γ 5120 94%, 7168 92%, RMS 12288 89%, 14336 93%;
# call 7 read 76%, 68%, 62%, 66% with the same configs and 111 lines of changed source).
# A/B, bench --forward --graph, two rounds: dae4f23 against the session's tree.
set -uo pipefail
B=build-device
scripts/gpu-environment.sh $B > $OUT/environment.txt 2>&1
mkdir -p $OUT/ab
timeout 150 scripts/bench-ab.sh $B/v/dae $B/normjit $OUT/ab \
  fwd "--forward --graph --dtypes bf16 --weights fp32,same --n 5120,7168,8192,12288,14336" > $OUT/ab.txt 2>&1
echo "ab exit $? at $SECONDS s"
grep -E "^(layer|rms)|median" $OUT/ab.txt | sed -E 's/threads_per_row=[0-9]+ //; s/registers //; s/shared_weights //' | cut -c1-140
tar czf $OUT/call8-logs.tgz -C $OUT ab 2>/dev/null; rm -rf $OUT/ab
