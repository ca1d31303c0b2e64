#!/usr/bin/env bash
# Session 29, call 2 (H200), 59d6124: the forward's memory-rich rule (two 16-byte slots a thread,
# prefetching). The forward GPU tests (one pins the new configs); an A/B of the forward against
# b100b60's normjit (build-device/v/old) across 2048-16384; the host breakdown the last session
# left (bench/host_breakdown.py); then normjit against its peers on the H200 (bf16, a subset of N,
# as time allows; Liger-Kernel 0.8.5's wheel carried in .whl/).
set -uo pipefail
B=build-device
GPU_TEST_FILTER='Forward*' GPU_TEST_SHARDS=16 BUILD_DIR=$B OUT=$OUT timeout 150 scripts/gpu-run.sh gpu-tests > $OUT/gpu-run.txt 2>&1
echo "forward GPU tests: exit $? at $SECONDS s"; grep -E "^shard|FAILED" $OUT/gpu-run.txt | head -20
mkdir -p $OUT/ab
N=2048,3072,4096,5120,6144,7168,8192,10240,12288,14336,16384
timeout 200 scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab \
  fwd "--forward --graph --dtypes bf16,fp16 --weights fp32 --n $N" \
  fwd-same "--forward --graph --dtypes bf16 --weights same --n $N" > $OUT/ab.txt 2>&1
echo "ab: exit $? at $SECONDS s"; grep -E "median|copy GB" $OUT/ab.txt
export NORMJIT_LIBRARY=$PWD/$B/libnormjit.so
NORMJIT_CACHE_DIR=$(mktemp -d) timeout 60 python3 bench/host_breakdown.py > $OUT/host-breakdown.txt 2>&1
echo "host-breakdown: exit $? at $SECONDS s"
left=$((560 - SECONDS))
BUILD_DIR=$B timeout $left scripts/gpu-peers.sh --n 1024,4096,5003,8192,16384,65536,262144 > /dev/null 2>&1
echo "peers: exit $? ($left s allowed) at $SECONDS s"; tail -20 $OUT/peers.txt | cut -c1-250
tar -C $OUT -czf $OUT/logs.tgz ab gpu-tests.txt && rm -rf $OUT/ab $OUT/gpu-tests.txt
