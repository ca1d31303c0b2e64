#!/usr/bin/env bash
# Session 32, call 3 (H200): branch next/fast-sigmoid-rules at afca9b6 (build-device/normjit): σ(z) from
# __expf and rcp.approx, with the gate's backward rules refitted to what ptxas holds without
# spilling (fp16 takes bf16's shapes; before the norm nothing prefetches; the gate's clusters
# do not prefetch; 8193-12288 a pair of blocks of 8 elements a thread). A/B against main
# 539569c (build-device/v/old), then every GPU test, then the backward sweep with small-M
# latency, then the forward sweep with the time left.
set -uo pipefail
B=build-device
NB="--graph --kinds rmsnorm --weights fp32 --fused gate,gate-before"
NLIST=2048,4096,6144,8192,10240,12288,16384,20480,32768
mkdir -p $OUT/ab
timeout 200 scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab \
  gate "$NB --dtypes bf16 --n $NLIST" gate16 "$NB --dtypes fp16 --n $NLIST" \
  fwdgate "--forward $NB --dtypes bf16,fp16 --n 4096,8192,16384" > $OUT/ab.txt 2>&1
echo "ab: exit $? at $SECONDS s"; grep -E "median" $OUT/ab.txt | head
GPU_TEST_SHARDS=16 BUILD_DIR=$B OUT=$OUT timeout 360 scripts/gpu-run.sh gpu-tests > $OUT/gpu-run.txt 2>&1
echo "GPU tests: exit $? at $SECONDS s"; grep -hE "^\[  (PASSED|FAILED) " $OUT/gpu-tests.txt | sort | uniq -c | head; grep -E "^\[  FAILED  \]" $OUT/gpu-tests.txt | head -20
NORMJIT_CACHE_DIR=$(mktemp -d) timeout $((585 - SECONDS)) $B/normjit bench --latency --graph --json $OUT/bench.json > $OUT/bench.txt 2>&1
echo "bench: exit $? at $SECONDS s"; head -2 $OUT/bench.txt
[ $SECONDS -lt 550 ] && NORMJIT_CACHE_DIR=$(mktemp -d) timeout $((590 - SECONDS)) $B/normjit bench --forward --graph --json $OUT/bench-forward.json > $OUT/bench-forward.txt 2>&1
echo "bench forward: exit $? at $SECONDS s"
tar -C $OUT -czf $OUT/logs.tgz ab gpu-tests.txt environment.txt && rm -rf $OUT/ab $OUT/gpu-tests.txt $OUT/environment.txt
