#!/usr/bin/env bash
# Session 49, call 6 (H200). build-device as call 5. The gated shapes call 5 read slower (their
# configs spill 100-400 bytes): what their candidates give (tune, the search space, M bucket).
set -uo pipefail
B=build-device
for a in "--dtype fp16 --weight-dtype fp32 --gate before-norm --n 65536 --m 1024" \
         "--dtype bf16 --weight-dtype fp32 --gate before-norm --n 65536 --m 1024" \
         "--dtype fp16 --weight-dtype fp32 --gate after-norm --n 12288 --m 5461"; do
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 150 $B/normjit tune --kind rmsnorm $a
done > $OUT/tune-spilling.txt 2> $OUT/tune-spilling.err
echo "tune exit $? at $SECONDS s"; grep -E "^rms|tuned config" $OUT/tune-spilling.txt | cut -c1-250
grep -E "time [0-9]+/[0-9]+" $OUT/tune-spilling.err | sed -E 's/.*(time [0-9]+\/[0-9]+) /\1 /' | cut -c1-200
