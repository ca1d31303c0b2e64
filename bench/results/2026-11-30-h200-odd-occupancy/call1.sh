#!/usr/bin/env bash
# Session 54, call 1 (H200). build-device at ee73885 (session 53's HEAD); v/old = 7539da8's
# normjit (before session 53).
# 1. `tune --align 2 --config` beside the heuristic, LayerNorm's odd rows of an element, M = 64 Mi / N
#    (bf16 fp32 γ and fp16): more threads an SM where ptxas holds them without spilling
#    (`emit --resources`): 3201-4095 in blocks of 352 (80 registers), 416 (72), 512 (64), two an
#    SM, or clusters of two blocks of 128, five an SM (96); 5003 in blocks of 512 two an SM or
#    640 one, or clusters of two of 224; 1601-2047 (the blocks of 128 prefetching two an SM) in
#    blocks of 128 five an SM (96), 192 four (80), 256 three or four (64-72), clusters of two of 64.
#    RMSNorm 4095 at bench's M (entry 65 next 1): its phased block against its rows of an element.
# 2. A/B, bench --graph, two rounds: LayerNorm's odd rows of N = 512k - 7, whose configs session 53
#    changed unmeasured (they left the phased cluster of two their twin had).
# 3. Standing at the odd N: 1000, 4095, 5003, both kinds, bf16 fp32 γ and fp16.
set -uo pipefail
B=build-device
scripts/gpu-environment.sh $B > $OUT/environment.txt 2>&1
run() {  # $1 label, $2 kind, $3 n, rest: configs (vec=1 registers implied unless the config says vec)
  local label=$1 k=$2 n=$3; shift 3
  local dt=(--dtype bf16 --weight-dtype fp32); [ $label = fp16 ] && dt=(--dtype fp16)
  local args=(); for c in "$@"; do
    case $c in *vec=*) args+=(--config "$c");; *) local t=${c%% *}; args+=(--config "threads=$t threads_per_row=$t vec=1 registers ${c#* }");; esac
  done
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 60 $B/normjit tune --align 2 --kind $k --n $n --m $((67108864 / n)) "${dt[@]}" "${args[@]}" 2>>$OUT/tune.err |
    grep -E "^(  config )?(rms|layer)norm" | sed -E "s/^/$label /; s/x=[a-z0-9]+ dy=[a-z0-9]+ dx=[a-z0-9]+ weight=[a-z0-9]+ //; s/threads_per_row=[0-9]+ //"
}
{
for d in bf16 fp16; do
  for n in 3201 3457 4095; do
    run $d layernorm $n "352 min_blocks=2" "416 min_blocks=2" "512 min_blocks=2" "352 min_blocks=2 shared_sums" "128 cluster=2 min_blocks=5"
  done
  run $d layernorm 5003 "512 min_blocks=2" "640 min_blocks=1" "224 cluster=2 min_blocks=4"
  for n in 1601 1901 2047; do
    run $d layernorm $n "128 min_blocks=5" "192 min_blocks=4" "256 min_blocks=3" "256 min_blocks=4" "64 cluster=2 min_blocks=10"
  done
  run $d rmsnorm 4095 "threads=288 threads_per_row=288 vec=8 registers min_blocks=3 shared_sums shared_weights phased"
done
} > $OUT/tune.txt
echo "tune exit $? at $SECONDS s"; cut -c1-230 $OUT/tune.txt
mkdir -p $OUT/ab
scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab \
  odd7 "--graph --kinds layernorm --dtypes bf16,fp16 --weights fp32,same --n 1529,2041,2553,3065,4601,5113,5625,6137" > $OUT/ab.txt 2>&1
echo "ab exit $? at $SECONDS s"
grep -E "^(layer|rms)|median" $OUT/ab.txt | sed -E 's/threads_per_row=[0-9]+ //; s/registers //; s/shared_weights //' | cut -c1-140
NORMJIT_CACHE_DIR=$(mktemp -d) timeout 90 $B/normjit bench --graph --dtypes bf16,fp16 --weights fp32 --n 1000,4095,5003 --json $OUT/standing.json > $OUT/standing.txt 2>&1
echo "standing exit $? at $SECONDS s"; cut -c1-160 $OUT/standing.txt | tail -16
tar czf $OUT/call1-logs.tgz -C $OUT ab tune.err 2>/dev/null; rm -rf $OUT/ab
