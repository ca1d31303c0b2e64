#!/usr/bin/env bash
# Session 43, call 9 (H200): build-device = the commit of this script. Call 8's memcheck found
# the phased forward reading 2 bytes past x at RMS bf16 N = 3 (rows shorter than a chunk share the
# tensor's last one); phased rows now need 16 bytes a row. memcheck again over the phased tests of
# both passes (forward, backward layout, tuning).
set -uo pipefail
B=build-device
s=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
NORMJIT_CACHE_DIR=$(mktemp -d) timeout 130 $s --tool memcheck --error-exitcode 9 $B/tests/normjit_gpu_tests \
  --gtest_filter='ForwardTuning.PhasedRowsMatchTheReference:BackwardPhasedRows.*:Tuning.PhasedRowsInEveryBlockShapeMatchTheReference' > $OUT/memcheck9.txt 2>&1
echo "memcheck exit $? at $SECONDS s"; grep -E "ERROR SUMMARY|PASSED|FAILED|OK \]|Invalid" $OUT/memcheck9.txt | head -12
gzip $OUT/memcheck9.txt
