#!/usr/bin/env bash
# Session 54, call 7 (H200). build-device at the session's final rules. Standing, bench --graph:
# the forward at the speed issue's N (bf16, fp32 and bf16 γ), the backward at the odd N the
# session's rules touched and the odd N (bf16 and fp16, fp32 γ).
set -uo pipefail
B=build-device
scripts/gpu-environment.sh $B > $OUT/environment.txt 2>&1
NORMJIT_CACHE_DIR=$(mktemp -d) timeout 150 $B/normjit bench --forward --graph --dtypes bf16 --weights fp32,same \
  --n 256,512,1024,2048,4096,5120,7168,8192,12288,14336,16384,32768,65536,131072,262144,1048576,1000,4095,5003 \
  --json $OUT/forward.json > $OUT/forward.txt 2>&1
echo "forward exit $? at $SECONDS s"; grep -E "^(layer|rms)" $OUT/forward.txt | awk '{print $1,$2,$3,$5,$7,$9}' | column -t
NORMJIT_CACHE_DIR=$(mktemp -d) timeout 100 $B/normjit bench --graph --dtypes bf16,fp16 --weights fp32 \
  --n 1000,1901,2553,3201,3457,4095,5003 --json $OUT/backward-odd.json > $OUT/backward-odd.txt 2>&1
echo "backward exit $? at $SECONDS s"; grep -E "^(layer|rms)" $OUT/backward-odd.txt | awk '{print $1,$2,$3,$5,$7,$9}' | column -t
