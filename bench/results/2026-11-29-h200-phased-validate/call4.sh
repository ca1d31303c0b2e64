#!/usr/bin/env bash
# Session 39, call 4 (H200): build-device = the commit of this script (the tuner now tries
# phased configs: the aligned twin's, up to 8). Kernels as in calls 1-3.
# 1) The GPU tests of the tuner and of phased rows (Tuning.* now runs LN bf16 1001's phased
#    candidates too).
# 2) normjit tune at odd 16-bit N, M = 16384: what the tuner picks, heuristic against tuned.
set -uo pipefail
B=build-device
GPU_TEST_SHARDS=16 GPU_TEST_FILTER='Tuning.*:BackwardPhasedRows.*' BUILD_DIR=$B OUT=$OUT timeout 240 scripts/gpu-run.sh gpu-tests > $OUT/gpu-run.txt 2>&1
echo "gpu tests exit $? at $SECONDS s"
grep -hE "^\[  (PASSED|FAILED) " $OUT/gpu-tests.txt | sort | uniq -c; grep -E "^\[  FAILED  \]|Failure" $OUT/gpu-tests.txt | head -20
export NORMJIT_CACHE_DIR=$(mktemp -d)
for k in layernorm rmsnorm; do for n in 1001 4095 5003 8191 12289; do
  timeout 40 $B/normjit tune --kind $k --n $n --dtype bf16 --weight-dtype fp32 --align 2 --m 16384 2>&1 | grep -vE "^\[[0-9]"
done; done > $OUT/tune.txt
echo "tune at $SECONDS s"
grep -hE "^(layer|rms)norm N" $OUT/tune.txt | cut -c1-250
tar czf $OUT/logs.tgz -C $OUT gpu-run.txt gpu-tests.txt && rm -f $OUT/gpu-run.txt $OUT/gpu-tests.txt
