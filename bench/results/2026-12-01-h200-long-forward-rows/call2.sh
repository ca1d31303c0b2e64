#!/usr/bin/env bash
# Session 61, call 2 (H200). build-device: 104c7f2 plus shared_weights holding γ alone where γ
# and β do not both fit a block (codegen::forward_holds_bias; uncommitted).
# Call 1 read the forward's long LayerNorm rows bound by L2: at 65536 columns a cluster of two
# 1024-thread blocks reads 256 KB of fp32 γ and β from L2 a block-row against 128 KB of x and y
# from DRAM (fp32 γ 102.7 µs, bf16 γ 85.4, RMSNorm 77.5), and every larger cluster that held
# them in shared memory lost more to its meetings.
# 1. GPU tests: the held-weight forward (γ alone at LN 65536 / 131072), long rows.
# 2. tune --forward --config: the heuristic, with γ held (alone where both do not fit), and
#    without prefetch, LN bf16 / fp16 with fp32 and 16-bit γ at 65536-262144.
# 3. tune --forward --exhaustive at 98304-524288: where the 512-thread streamed rows (call 1: LN
#    262144 121.4 against 133.1 µs) and the held γ win.
set -uo pipefail
B=build-device
mkdir -p $OUT/logs
GPU_TEST_SHARDS=2 GPU_TEST_FILTER='ForwardTuning.HeldWeights*:Forward.LongRows*' BUILD_DIR=$B OUT=$OUT/logs timeout 120 scripts/gpu-run.sh gpu-tests > $OUT/logs/tests-run.txt 2>&1
echo "tests exit $? at $SECONDS s"
grep -hE '^\[  (PASSED|FAILED|SKIPPED) ' $OUT/logs/gpu-tests*.txt | sort | uniq -c | head; grep -h -B2 -A8 'Failure' $OUT/logs/gpu-tests*.txt | head -30
c() { echo "threads=$1 threads_per_row=$1 vec=8 $2"; }
for n in 65536 131072 262144; do
  cl=$(( n == 65536 ? 2 : (n == 131072 ? 4 : 8) ))
  for dw in bf16:fp32 fp16:fp32 bf16:same; do
    d=${dw%:*} w=${dw#*:}
    extra=(); [ $n = 262144 ] && extra=(--config "$(c 512 streamed)")
    NORMJIT_CACHE_DIR=$(mktemp -d) timeout 45 $B/normjit tune --forward --kind layernorm --dtype $d --weight-dtype $w --n $n --m $((67108864 / n)) \
      --config "$(c 1024 "registers cluster=$cl prefetch shared_weights")" --config "$(c 1024 "registers cluster=$cl shared_weights")" \
      --config "$(c 1024 "registers cluster=$cl")" "${extra[@]}" > $OUT/logs/fwd-layernorm-$n-$d-$w.txt 2>&1
    echo "-- forward layernorm $n $d $w exit $? at $SECONDS s"
    grep -E '^ *config |does not fit|rror' $OUT/logs/fwd-layernorm-$n-$d-$w.txt | sed 's/  */ /g; s/.*| threads=/threads=/; s/threads_per_row=[0-9]* //' | cut -c1-140
  done
done
for n in 98304 196608 393216 524288; do
  for k in layernorm rmsnorm; do
    NORMJIT_CACHE_DIR=$(mktemp -d) timeout 60 $B/normjit tune --forward --exhaustive --kind $k --dtype bf16 --weight-dtype fp32 --n $n --m $((67108864 / n)) > $OUT/logs/tune-$k-$n.txt 2>&1
    echo "-- exhaustive forward $k $n exit $? at $SECONDS s"; tail -3 $OUT/logs/tune-$k-$n.txt | cut -c1-250
  done
done
tar czf $OUT/call2.tgz -C $OUT logs && rm -rf $OUT/logs
