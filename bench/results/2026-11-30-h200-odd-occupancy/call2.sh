#!/usr/bin/env bash
# Session 54, call 2 (H200). build-device = ee73885 plus V.diff (uncommitted): LayerNorm fp16's
# blocks of rows of an element of 128 threads (1537-2048) five an SM without prefetch (call 1's
# tune: 1.04-1.09x; bf16 keeps its prefetch, 0.96-0.97x without), and of 160 (2049-2560) four an
# SM (ptxas gave 2433-2557 186 registers: two an SM; call 1's A/B: fp16 2553 137 -> 325 us when
# session 53 moved it there). v/old = ee73885's normjit.
# 1. A/B, bench --graph, two rounds: fp16 LayerNorm odd 1601-2559.
# 2. `tune --align 2 --config` beside the heuristic (M = 64 Mi / N): LayerNorm's rows in phase in
#    the phased cluster of two prefetching, a slot a thread (the config N = 512k - 7 took before
#    session 53, and beat its neighbours' at 1529, 5625, 6137 by 1.03-1.07x in call 1's A/B), at
#    1201-1529 and 5247-8191, bf16 fp32 γ and fp16.
set -uo pipefail
B=build-device
scripts/gpu-environment.sh $B > $OUT/environment.txt 2>&1
mkdir -p $OUT/ab
scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab \
  fp16el "--graph --kinds layernorm --dtypes fp16 --weights fp32,same --n 1601,1793,1901,2001,2047,2113,2241,2305,2433,2501,2553,2559" > $OUT/ab.txt 2>&1
echo "ab exit $? at $SECONDS s"
grep -E "^(layer|rms)|median" $OUT/ab.txt | sed -E 's/threads_per_row=[0-9]+ //; s/registers //; s/shared_weights //' | cut -c1-140
pc() {  # the phased cluster of two prefetching, a 16-byte slot a thread
  local t=$(( ( ($1 + 7 + 15) / 16 + 31) / 32 * 32 ))
  echo "threads=$t threads_per_row=$t vec=8 registers cluster=2 prefetch min_blocks=$((1024 / t)) shared_sums shared_weights phased"
}
run() {  # $1 label, $2 n
  local dt=(--dtype bf16 --weight-dtype fp32); [ $1 = fp16 ] && dt=(--dtype fp16)
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 60 $B/normjit tune --align 2 --kind layernorm --n $2 --m $((67108864 / $2)) "${dt[@]}" --config "$(pc $2)" 2>>$OUT/tune.err |
    grep -E "^(  config )?(rms|layer)norm" | sed -E "s/^/$1 /; s/x=[a-z0-9]+ dy=[a-z0-9]+ dx=[a-z0-9]+ weight=[a-z0-9]+ //; s/threads_per_row=[0-9]+ //; s/ \+weight \+bias//"
}
{
for d in bf16 fp16; do
  for n in 1201 1409 1529 5247 5625 6001 6655 7001 7501 8191; do run $d $n; done
done
} > $OUT/tune.txt
echo "tune exit $? at $SECONDS s"; grep -v config $OUT/tune.txt | cut -c1-250
tar czf $OUT/call2-logs.tgz -C $OUT ab tune.err 2>/dev/null; rm -rf $OUT/ab
