#!/usr/bin/env bash
# Session 54, call 4 (H200). build-device as call 3.
# 1. The forward's long rows (65536 61-75% of copy, 131072 55-69%, 262144 53-63% in session 45's
#    bench-forward): `tune --forward` over the search space at 65536 (M = 1024), and `--config`
#    beside the heuristic: clusters prefetching the next row (the search space has none), LN and
#    RMS, bf16 fp32 γ and bf16 γ.
# 2. LayerNorm's element blocks of 224 threads (3073-3584, 448 threads an SM at 114-128
#    registers): 256 threads three an SM (80 registers, no spill) and 512 two an SM, `tune
#    --align 2 --config`, bf16 fp32 γ and fp16.
set -uo pipefail
B=build-device
scripts/gpu-environment.sh $B > $OUT/environment.txt 2>&1
clean() { sed -E "s/x=[a-z0-9]+ dy=[a-z0-9]+ dx=[a-z0-9]+ //; s/threads_per_row=[0-9]+ //; s/ \+weight( \+bias)?//"; }
fwd() {  # $1 kind, $2 n, $3 weight, rest: configs
  local k=$1 n=$2 w=$3; shift 3
  local args=(); for c in "$@"; do local t=${c%% *}; args+=(--config "threads=$t threads_per_row=$t vec=8 registers ${c#* }"); done
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 90 $B/normjit tune --forward --kind $k --n $n --m $((67108864 / n)) --dtype bf16 --weight-dtype $w "${args[@]}" 2>>$OUT/tune.err |
    grep -E "^(  config )?(rms|layer)norm" | clean | sed "s/^/$w /"
}
{
for k in layernorm rmsnorm; do
  for w in fp32 same; do
    fwd $k 65536 $w
    fwd $k 65536 $w "512 cluster=4 prefetch" "1024 cluster=2 prefetch" "256 cluster=8 prefetch min_blocks=2"
    fwd $k 131072 $w "512 cluster=8 prefetch" "1024 cluster=4 prefetch"
    fwd $k 262144 $w "1024 cluster=8 prefetch"
  done
done
} > $OUT/tune-forward.txt
echo "forward tune exit $? at $SECONDS s"; cut -c1-200 $OUT/tune-forward.txt
{
for d in bf16 fp16; do
  dt=(--dtype bf16 --weight-dtype fp32); [ $d = fp16 ] && dt=(--dtype fp16)
  for n in 3073 3329 3583; do
    NORMJIT_CACHE_DIR=$(mktemp -d) timeout 60 $B/normjit tune --align 2 --kind layernorm --n $n --m $((67108864 / n)) "${dt[@]}" \
      --config "threads=256 threads_per_row=256 vec=1 registers min_blocks=3" --config "threads=512 threads_per_row=512 vec=1 registers min_blocks=2" 2>>$OUT/tune.err |
      grep -E "^(  config )?(rms|layer)norm" | clean | sed "s/^/$d /"
  done
done
} > $OUT/tune-224.txt
echo "224 tune exit $? at $SECONDS s"; cut -c1-200 $OUT/tune-224.txt
gzip -f $OUT/tune.err
