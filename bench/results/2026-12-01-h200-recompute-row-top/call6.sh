#!/usr/bin/env bash
# Session 57, call 6 (H200). build-device: call 5's code plus fp32 recompute rows of 4097-5120
# without the next row, two blocks an SM (from call 2's tune data). v/old = 35d3347.
# 1. tune --config: the rules before (prefetching), the same blocks without prefetch one an SM
#    and two an SM (the new rule; LN spills 40-156 bytes at its 48 registers).
# 2. A/B old against new, bench --graph, two rounds.
set -uo pipefail
B=build-device
for kind in layernorm rmsnorm; do
  for n in 4097 4353 4609 4865 5119; do
    t=$(( ((n + 7) / 8 + 31) / 32 * 32 ))
    NORMJIT_CACHE_DIR=$(mktemp -d) timeout 30 $B/normjit tune --kind $kind --dtype fp32 --n $n --align 4 --m $(( 67108864 / n )) \
      --recompute-from-output --config "threads=$t threads_per_row=$t vec=1 registers prefetch" \
      --config "threads=$t threads_per_row=$t vec=1 registers" --config "threads=$t threads_per_row=$t vec=1 registers min_blocks=2" \
      2>> $OUT/tune-progress.txt | grep -E "^ *config" >> $OUT/configs.txt
  done
done
echo "configs done at $SECONDS s"
cat $OUT/configs.txt | sed 's/x=fp32.*recompute M<=[0-9]*//'
mkdir -p $OUT/ab
timeout 90 scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab \
  fp32 "--graph --dtypes fp32 --n 4097,4353,4609,4865,5119 --fused recompute" > $OUT/ab.txt 2>&1
echo "ab exit $? at $SECONDS s"
grep -E "recompute|median" $OUT/ab.txt | cut -c1-130
mkdir -p $OUT/logs && mv $OUT/ab $OUT/tune-progress.txt $OUT/logs/ 2>/dev/null
tar czf $OUT/call6.tgz -C $OUT logs && rm -rf $OUT/logs
