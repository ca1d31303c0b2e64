#!/usr/bin/env bash
# Session 14, call 3 (075a716): bench/peers.py with its two timings (GPU, behind a sleep; from Python),
# bf16 and fp16 (weights in x's dtype), LayerNorm and RMSNorm, every N of the sweep.
set -uo pipefail
b=build-device
for dt in ${DTYPES:-bf16 fp16}; do
  BUILD_DIR=$b timeout 290 scripts/gpu-peers.sh --dtype $dt > /dev/null 2>&1; echo "$dt exit $?"
  mv $OUT/peers.txt $OUT/peers-$dt.txt; mv $OUT/peers.json $OUT/peers-$dt.json
  cut -c1-30,31-200 $OUT/peers-$dt.txt | tail -42
done
