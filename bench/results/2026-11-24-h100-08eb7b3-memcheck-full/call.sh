#!/usr/bin/env bash
# Session 11, call 7: memcheck over the WHOLE sanitize matrix of issue 7 (LayerNorm and RMSNorm
# x fp32, fp16, bf16 x N in {1, 33, 1000, 4096, 8192, 65536, 262144} x M in {1, 199, 4096}),
# no M*N cap (2^30 covers 4096 x 262144), without the plain warm-up (memcheck's own run
# compiles each kernel once; NVRTC is host code).
set -uo pipefail
b=build-device
scripts/gpu-environment.sh $b > $OUT/environment.txt 2>&1
start=$(date +%s)
BUILD_DIR=$b SANITIZE_TOOLS=memcheck SANITIZE_WARMUP=0 SANITIZE_FILTER_memcheck='AllVariants/BackwardMatrix.*' \
  CAP_memcheck=1073741824 TIMEOUT_memcheck=560 timeout 580 scripts/gpu-sanitize.sh > /dev/null 2>&1
echo "gpu-sanitize.sh: exit $? after $(( $(date +%s) - start )) s" >> $OUT/sanitize.txt
grep -E "^sanitize:|ERROR SUMMARY|\[  (PASSED|FAILED|  OK) |gpu-sanitize" $OUT/sanitize.txt | tail -12
