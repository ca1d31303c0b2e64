#!/usr/bin/env bash
# Session 49, call 3 (H200). build-device at the commit after the gate's two changes (σ's 2^x
# flushing subnormal results; fp32 γ held for dz); v/old = 7aab213's normjit (session 48's HEAD).
# 1. The gated GPU tests (both orders, every family, fused combinations, the forward's).
# 2. A/B old -> new, two rounds: gated RMSNorm backward bf16 fp32 γ 2048-65536 and fp16 16-bit γ,
#    and the gated forward (σ is shared).
# 3. The gate's configs with γ in shared memory beside the heuristic's, at 8192-32768.
set -uo pipefail
B=build-device
export NORMJIT_CACHE_DIR=$(mktemp -d)
GPU_TEST_SHARDS=8 GPU_TEST_FILTER='*BackwardGated*:*ForwardFused*:*BackwardFused*' BUILD_DIR=$B OUT=$OUT timeout 220 scripts/gpu-run.sh gpu-tests > $OUT/tests-run.txt 2>&1
echo "tests exit $? at $SECONDS s"
grep -E '^\[  (PASSED|FAILED|SKIPPED) |Failure' $OUT/gpu-tests.txt | sort | uniq -c | head -30
grep -A8 Failure $OUT/gpu-tests.txt | head -40
mkdir -p $OUT/ab
scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab \
  bf16 "--graph --kinds rmsnorm --dtypes bf16 --weights fp32 --n 2048,4096,8192,16384,32768,65536 --fused gate,gate-before" \
  fp16 "--graph --kinds rmsnorm --dtypes fp16 --weights same --n 4096,16384,65536 --fused gate,gate-before" \
  fwd "--forward --graph --kinds rmsnorm --dtypes bf16 --weights fp32 --n 4096,16384 --fused gate,gate-before" > $OUT/ab.txt 2>&1
echo "ab exit $? at $SECONDS s"; grep -E "^(layer|rms)|median" $OUT/ab.txt | cut -c1-120
S="registers shared_sums"
for n in 8192 16384 32768; do
  c1="threads=1024 threads_per_row=1024 vec=8"; [ $n = 32768 ] && c1="threads=1024 threads_per_row=1024 vec=8 cluster=2"
  [ $n = 16384 ] && c1="threads=1024 threads_per_row=1024 vec=8 cluster=2"
  $B/normjit tune --kind rmsnorm --n $n --dtype bf16 --weight-dtype fp32 --m $((67108864 / n)) --gate after-norm \
    --config "$c1 $S shared_weights" --config "$c1 $S"
done > $OUT/tune-gate.txt 2> $OUT/tune-gate.err
echo "tune exit $? at $SECONDS s"; grep -E "^  config|^rms" $OUT/tune-gate.txt | cut -c1-220
tar czf $OUT/call3-logs.tgz -C $OUT ab ab.txt gpu-tests.txt tests-run.txt tune-gate.err 2>/dev/null; rm -rf $OUT/ab
