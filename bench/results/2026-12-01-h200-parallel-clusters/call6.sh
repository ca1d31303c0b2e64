#!/usr/bin/env bash
# Session 60, call 6 (H200). build-device: as call 5. Parallel norms at 16384, where the rules
# keep one slot a thread (LayerNorm: clusters of 4 of 512, two an SM; RMSNorm: a cluster of two
# 1024-thread blocks): does call 3's shape (clusters of four blocks of two slots, here 256
# threads) win there too, at two, three or four an SM? --config beside the heuristic.
set -uo pipefail
B=build-device
mkdir -p $OUT/logs
cfg() { echo "threads=$1 threads_per_row=$1 vec=8 registers cluster=$2 min_blocks=$3 shared_sums$4"; }
for k in layernorm rmsnorm; do
  for dw in bf16:fp32 fp16:same; do
    d=${dw%:*} w=${dw#*:}
    NORMJIT_CACHE_DIR=$(mktemp -d) timeout 60 $B/normjit tune --kind $k --dtype $d --weight-dtype $w --n 16384 --m 4096 --parallel \
      --config "$(cfg 256 4 2 ' shared_weights')" --config "$(cfg 256 4 2 '')" --config "$(cfg 256 4 3 '')" \
      --config "$(cfg 256 4 4 '')" --config "$(cfg 128 8 4 '')" > $OUT/logs/p16384-$k-$d-$w.txt 2>&1
    echo "-- $k $d $w exit $? at $SECONDS s"
    grep -E "^ *config |does not fit" $OUT/logs/p16384-$k-$d-$w.txt | sed 's/  */ /g; s/x=.*M<=/M<=/; s/threads_per_row=[0-9]* //' | cut -c1-200
  done
done
tar czf $OUT/call6.tgz -C $OUT logs && rm -rf $OUT/logs
