#!/usr/bin/env bash
# Session 47, call 6 (H200). build-device as call 5. The five GPU tests call 5's shard 5 did not
# reach before its 380 s timeout (BackwardSharedSums.EverySharedSumsCandidate took 234 s there,
# the paired candidates now among its shared-sums configs), one process each.
set -uo pipefail
B=build-device
i=0
for t in 'Tuning.PhasedRowsInEveryBlockShapeMatchTheReference' 'EveryN/BackwardFewGroups.ManyRowConfigsWithFusedOptionsMatchTheReference/N33' \
         'EachOption/BackwardFused.MatchesFloat64Reference/DropoutBytes' 'AllVariants/BackwardMatrix.MatchesFloat64ReferenceForEveryShape/LayerNorm_f32_NoAffine' \
         'AllVariants/BackwardMatrix.MatchesFloat64ReferenceForEveryShape/RMSNorm_f32_NoAffine'; do
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 120 $B/tests/normjit_gpu_tests --gtest_filter="$t" > $OUT/t$i.txt 2>&1 &
  i=$((i + 1))
done
wait
for f in $OUT/t*.txt; do grep -E '^\[       OK|^\[  FAILED  \].*ms\)|^\[  SKIPPED' $f || echo "$f: no verdict (timeout)"; done
cat $OUT/t*.txt > $OUT/gpu-tests-call6.txt; rm -f $OUT/t*.txt
