#!/usr/bin/env bash
# Session 28, call 4 (H200), 5cbc10c: the heuristic's rules for memory-rich devices (fitted to
# call 3's exhaustive tuning). Every GPU test (the engine takes the new rules on this device);
# an A/B against 88bbb02's normjit (build-device/v/old: the H100's rules) on 16-bit rows across
# the ranges the rules change; then the whole backward sweep as far as the call's time allows.
set -uo pipefail
B=build-device
GPU_TEST_SHARDS=16 BUILD_DIR=$B OUT=$OUT timeout 280 scripts/gpu-run.sh gpu-tests > $OUT/gpu-run.txt 2>&1
echo "GPU tests: exit $?"; grep -E "^shard|FAILED" $OUT/gpu-run.txt | head -30
mkdir -p $OUT/ab
N=1536,2048,2560,3072,3584,4096,8192,9216,10240,12288,14336,15360,16384,20480,24576,32768,65536
for s in old new; do
  bin=$B/normjit; [ $s = old ] && bin=$B/v/old
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 100 $bin bench --graph --dtypes bf16 --weights fp32,same --n $N --json $OUT/ab/bf16-$s.json > $OUT/ab/bf16-$s.txt 2>&1
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 70 $bin bench --graph --dtypes fp16 --weights fp32 --n $N --json $OUT/ab/fp16-$s.json > $OUT/ab/fp16-$s.txt 2>&1
done
for d in bf16 fp16; do python3 bench/compare_bench.py $OUT/ab/$d-old.json $OUT/ab/$d-new.json | cut -c1-220; done > $OUT/ab.txt 2>&1
grep -E "median|copy GB" $OUT/ab.txt
left=$((570 - SECONDS))
if [ $left -gt 60 ]; then
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout $left $B/normjit bench --latency --graph --json $OUT/bench.json > $OUT/bench.txt 2>&1
  echo "bench: exit $? ($left s allowed)"; tail -2 $OUT/bench.txt
fi
tar -C $OUT -czf $OUT/logs.tgz ab gpu-tests.txt && rm -rf $OUT/ab $OUT/gpu-tests.txt
