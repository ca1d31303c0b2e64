#!/usr/bin/env bash
# Session 53, call 1 (H200). build-device at 7539da8 (session 52's end); v/old = its normjit;
# v/P and v/Q are experiment binaries (diffs in this folder: P.diff, Q.diff; not committed code).
# 1. A/B old vs P, bench --graph, M·N = 64 Mi, two rounds: LayerNorm's aligned 16-bit rows paired
#    (fp16 1024: one block of 128 with shared sums; 1536-7168 in 512-column steps: a cluster of
#    two without prefetch), bf16 and fp16, fp32 and 16-bit γ.
# 2. A/B old vs Q: LayerNorm's 16-bit rows in phase (odd N, contiguous): 769-1023 a phased
#    prefetching block of shared sums, 1024-3584 rows of an element prefetching two blocks an SM.
# 3. normjit tune of RMSNorm's rows in phase 1019/1021/1023 (full search space, bf16 fp32 γ and
#    fp16), plus the 96-thread phased prefetching block (not in the space) by --config.
set -uo pipefail
B=build-device
scripts/gpu-environment.sh $B > $OUT/environment.txt 2>&1
mkdir -p $OUT/abP $OUT/abQ
scripts/bench-ab.sh $B/v/old $B/v/P $OUT/abP \
  lnP "--graph --kinds layernorm --dtypes bf16,fp16 --weights fp32,same --n 1024,1536,2048,2560,3072,3584,4096,4608,5120,5632,6144,6656,7168" > $OUT/abP.txt 2>&1
echo "abP exit $? at $SECONDS s"
scripts/bench-ab.sh $B/v/old $B/v/Q $OUT/abQ \
  lnQ "--graph --kinds layernorm --dtypes bf16,fp16 --weights fp32,same --n 769,801,871,935,961,999,1001,1021,1201,1537,2001,2047,2559,3001,3583" > $OUT/abQ.txt 2>&1
echo "abQ exit $? at $SECONDS s"
run() {  # $1 = label, rest = tune args
  local label=$1; shift
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 40 $B/normjit tune --align 2 "$@" 2>>$OUT/tune.err | grep -E "^(rms|layer)norm" | sed "s/^/$label /"
}
{
for n in 1021 1019 1023; do
  m=$((67108864 / n))
  run bf16f32 --kind rmsnorm --n $n --m $m --dtype bf16 --weight-dtype fp32
  run fp16f16 --kind rmsnorm --n $n --m $m --dtype fp16
  for cfg in "threads=96 threads_per_row=96 vec=8 registers prefetch min_blocks=8 shared_sums shared_weights phased"; do
    run cfg-bf16f32 --kind rmsnorm --n $n --m $m --dtype bf16 --weight-dtype fp32 --config "$cfg"
  done
  [ $SECONDS -gt 470 ] && break
done
} > $OUT/tune.txt
echo "tune exit $? at $SECONDS s"
for f in abP abQ; do grep -E "^(layer|rms)|median" $OUT/$f.txt | sed -E 's/threads_per_row=[0-9]+ //; s/registers //; s/shared_weights //' | cut -c1-160; done
sed -E 's/x=[a-z0-9]+ dy=[a-z0-9]+ dx=[a-z0-9]+ weight=[a-z0-9]+ //; s/threads_per_row=[0-9]+ //; s/ +/ /g' $OUT/tune.txt | cut -c1-200
grep -E "time|final" $OUT/tune.err | tail -30
tar czf $OUT/call1-logs.tgz -C $OUT abP abQ 2>/dev/null; rm -rf $OUT/abP $OUT/abQ
