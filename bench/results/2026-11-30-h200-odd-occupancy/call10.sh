#!/usr/bin/env bash
# Session 54, call 10 (H200). build-device = the session's tree plus the fix (uncommitted:
# store_slot's whole-or-absent fold off for the forward's stores, FOLD = false); v/dae4f23 =
# session 45's normjit. bench --forward --graph, bf16 fp32 γ, once each; the forward GPU tests.
set -uo pipefail
B=build-device
for bin in $B/v/dae4f23 $B/normjit; do
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 40 $bin bench --forward --graph --dtypes bf16 --weights fp32 --n 5120,7168,8192,12288,14336,65536 \
    > $OUT/fwd-$(basename $bin).txt 2>&1
  echo "$(basename $bin): $(grep -E '^(layer|rms)' $OUT/fwd-$(basename $bin).txt | awk '{printf "%s%s %s | ", substr($1,1,1), $5, $7}')"
done
GPU_TEST_SHARDS=4 GPU_TEST_FILTER='Forward.*:ForwardTuning.MemoryRich*' BUILD_DIR=$B OUT=$OUT timeout 90 scripts/gpu-run.sh gpu-tests > $OUT/tests-run.txt 2>&1
echo "tests exit $? at $SECONDS s"; grep -hE '^\[  (PASSED|FAILED) |Failure' $OUT/gpu-tests*.txt | sort | uniq -c
