#!/usr/bin/env bash
# Session 25, call 7: the Python backward matrix again, twice, after call 6's one failure (LN
# M = 199, N = 1, fp32: dβ, a single column summing 199 dy, 1.93e-5 from float64 against 1e-5
# of its own value: the column's sum had cancelled). test_torch_gpu now measures dγ/dβ also
# against the 2-norm of the terms each column sums, as the C++ tests do.
set -uo pipefail
export NORMJIT_LIBRARY=$PWD/build-device/libnormjit.so NORMJIT_CACHE_DIR=$(mktemp -d)
cd python/tests
for r in 1 2; do
  timeout 250 python3 -m unittest -v test_torch_gpu.BackwardMatrixTest > $OUT/matrix-$r.txt 2>&1
  echo "run $r: exit $? $(tail -3 $OUT/matrix-$r.txt | tr '\n' ' ')"
  grep -E "FAIL|worst normwise error (ln|rms) d(weight|bias)" $OUT/matrix-$r.txt | head -24
done
