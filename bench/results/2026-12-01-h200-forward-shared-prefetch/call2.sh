#!/usr/bin/env bash
# Session 62, call 2 (H200). build-device: as call 1 (aea1a09 + bench --config).
# 1. The forward's RMSNorm 16-bit rows of 40960-163840 (multiples of 8192): clusters of 8 with γ
#    held, N/256 threads (four slots a thread) one to three an SM, N/128 threads (two slots,
#    prefetching) one or two an SM, pinned at bench's M beside the heuristic (call 1: 1.09-1.23x
#    at 49152-114688 with fp32 γ). bf16 with fp32 and bf16 γ; LayerNorm fp32 γ at three N.
# 2. Exhaustive backward tuning where the fused options take 8-byte vectors at 2048-4096 (call 1:
#    LN recompute 4096 162.1 us against 144.1 for 128-thread blocks of 16-byte vectors).
set -uo pipefail
B=build-device
mkdir -p $OUT/logs
c8() {  # kind weights n: bench --forward with the cluster-of-8 configs for n
  local kind=$1 w=$2 n=$3 args=()
  local t4=$((n / 256)) t2=$((n / 128))
  for mb in 1 2 3; do
    [ $((t4 * mb)) -le 1024 ] && [ $t4 -ge 64 ] && args+=(--config "threads=$t4 threads_per_row=$t4 vec=8 registers cluster=8 min_blocks=$mb shared_weights")
  done
  for mb in 1 2; do
    [ $((t2 * mb)) -le 1024 ] && args+=(--config "threads=$t2 threads_per_row=$t2 vec=8 registers cluster=8 prefetch min_blocks=$mb shared_weights")
  done
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 60 $B/normjit bench --forward --graph --kinds $kind --dtypes bf16 --weights $w --n $n "${args[@]}" --json $OUT/logs/c8-$kind-$w-$n.json > $OUT/logs/c8-$kind-$w-$n.txt 2>&1
  echo "$kind $w $n exit $? at $SECONDS s"; grep -E "^(rms|layer)" $OUT/logs/c8-$kind-$w-$n.txt | sed 's/  */ /g' | cut -d' ' -f5-7,10-20 | cut -c1-150
}
for n in 40960 49152 57344 65536 73728 81920 90112 98304 106496 114688 122880 131072 147456 163840; do
  c8 rmsnorm fp32 $n
done
for n in 57344 81920 98304 114688; do c8 rmsnorm same $n; done
for n in 81920 98304 114688; do c8 layernorm fp32 $n; done
tb() {  # name, tune args
  local name=$1; shift
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 60 $B/normjit tune --exhaustive "$@" > $OUT/logs/tune-$name.txt 2>&1
  echo "$name exit $? at $SECONDS s"; grep -E '^ *fit' $OUT/logs/tune-$name.txt | awk -F'|' '{print $3, "|", $2}' | sort -n | head -3
  grep -E "M<=[0-9]+ +[0-9]+ " $OUT/logs/tune-$name.txt | tail -1 | sed 's/  */ /g' | cut -c1-260
}
for d in bf16 fp16; do
  for n in 2048 3072 4096; do tb ln-recompute-$d-$n --kind layernorm --recompute-from-output --dtype $d --weight-dtype fp32 --n $n --m $((67108864 / n)); done
  for n in 2048 4096; do tb ln-parallel-$d-$n --kind layernorm --parallel --dtype $d --weight-dtype fp32 --n $n --m $((67108864 / n)); done
  tb rms-recompute-$d-2048 --kind rmsnorm --recompute-from-output --dtype $d --weight-dtype fp32 --n 2048 --m 32768
  tb rms-parallel-$d-2048 --kind rmsnorm --parallel --dtype $d --weight-dtype fp32 --n 2048 --m 32768
done
tb ln-recompute-bf16same-4096 --kind layernorm --recompute-from-output --dtype bf16 --weight-dtype same --n 4096 --m 16384
tb ln-parallel-bf16same-4096 --kind layernorm --parallel --dtype bf16 --weight-dtype same --n 4096 --m 16384
tar czf $OUT/call2.tgz -C $OUT logs && rm -rf $OUT/logs
