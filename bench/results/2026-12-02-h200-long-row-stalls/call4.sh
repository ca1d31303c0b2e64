#!/usr/bin/env bash
# Session 66, call 4 (H200). build-device: 14ad71e + kMaxGridStages 8 → 12 (uncommitted; the
# grid_ahead field of call 3 reverted). Call 3: the grid's time goes with the rows waiting for the
# other blocks' sums (stages − 2), not with the rows copying. Pinned beside the heuristic (5
# stages everywhere): more stages, so more rows waiting, where they fit; bench --graph.
set -uo pipefail
B=build-device
L=$OUT/logs
mkdir -p $L
G="registers cluster=132 grid staged"
v() {  # threads vec stages [shared_weights]
  echo "threads=$1 threads_per_row=$1 vec=$2 $G stages=$3${4:+ $4}"
}
PIN_TIMEOUT=90 scripts/bench-pin.sh $L s1m16 "--kinds layernorm,rmsnorm --dtypes bf16,fp16 --weights fp32,same --n 1048576" \
  "$(v 512 8 6 shared_weights)" "$(v 512 8 6)" "$(v 512 8 7)"
PIN_TIMEOUT=90 scripts/bench-pin.sh $L s524288 "--kinds layernorm,rmsnorm --dtypes bf16,fp32 --weights fp32 --n 524288" \
  "$(v 512 8 8 shared_weights)" "$(v 512 8 10 shared_weights)" "$(v 512 8 12 shared_weights)" \
  "$(v 1024 4 6 shared_weights)" "$(v 1024 4 7)"
PIN_TIMEOUT=60 scripts/bench-pin.sh $L s458752 "--kinds layernorm,rmsnorm --dtypes bf16 --weights fp32 --n 458752" \
  "$(v 448 8 8 shared_weights)" "$(v 448 8 12 shared_weights)"
PIN_TIMEOUT=60 scripts/bench-pin.sh $L s1m-rows "--kinds layernorm --dtypes bf16 --weights fp32 --n 1048576 --m 16,32,128" \
  "$(v 512 8 6 shared_weights)" "$(v 512 8 7)"
PIN_TIMEOUT=60 scripts/bench-pin.sh $L sfew "--kinds layernorm,rmsnorm --dtypes bf16 --weights fp32 --n 262144 --m 8,16" \
  "$(v 256 8 8 shared_weights)" "$(v 256 8 12 shared_weights)"
echo "pins at ${SECONDS}s"
tar czf $OUT/call4.tgz -C $OUT logs && rm -rf $L
