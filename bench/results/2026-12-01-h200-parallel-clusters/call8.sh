#!/usr/bin/env bash
# Session 60, call 8 (H200), the last of the device time. build-device: as call 5. Call 6 read
# parallel norms at 16384 faster in clusters of four blocks of two slots, three an SM, with bf16
# and fp32 γ (LN 245 → 225, RMS 213 → 183 µs) but slower with fp16 and fp16 γ. Map it for the next
# session's rule: 13312-16384, the other two type pairs too. --config beside the heuristic.
set -uo pipefail
B=build-device
mkdir -p $OUT/logs
cfg() { echo "threads=$1 threads_per_row=$1 vec=8 registers cluster=4 min_blocks=$2 shared_sums"; }
for n in 13312 14336 16384; do
  for k in layernorm rmsnorm; do
    for dw in bf16:fp32 fp16:fp32 bf16:same; do
      d=${dw%:*} w=${dw#*:}
      NORMJIT_CACHE_DIR=$(mktemp -d) timeout 40 $B/normjit tune --kind $k --dtype $d --weight-dtype $w --n $n --m $((67108864 / n)) --parallel \
        --config "$(cfg $((n / 64)) 2)" --config "$(cfg $((n / 64)) 3)" > $OUT/logs/p$n-$k-$d-$w.txt 2>&1
      echo "-- $k $n $d $w"; grep -E '^ *config ' $OUT/logs/p$n-$k-$d-$w.txt | sed 's/  */ /g; s/.*| threads=/threads=/; s/threads_per_row=[0-9]* //' | cut -c1-120
    done
  done
done
tar czf $OUT/call8.tgz -C $OUT logs && rm -rf $OUT/logs
