#!/usr/bin/env bash
# Session 31, call 1 (H200), 6e696a5: every GPU test on the review's commits (SlotPieces,
# the engine's one dynamic-shared opt-in, the residual rule, the fused-set parser); Nsight Compute
# of the fused kernels (LN bf16 8192 parallel and recompute, RMS bf16 8192 gate after the norm),
# each through `normjit tune` (the heuristic's candidate is its first launch); then branch
# next/forward-held-candidates' normjit (build-device/v/old, 9823465) tuning the forward's
# LN bf16 fp32 γ at 8192 / 12288 / 14336 against its heuristic.
set -uo pipefail
B=build-device
GPU_TEST_SHARDS=16 BUILD_DIR=$B OUT=$OUT timeout 320 scripts/gpu-run.sh gpu-tests > $OUT/gpu-run.txt 2>&1
echo "GPU tests: exit $? at $SECONDS s"; grep -hE "^\[  (PASSED|FAILED) " $OUT/gpu-tests.txt | sort | uniq -c | head; grep -E "^\[  FAILED  \]" $OUT/gpu-tests.txt | head -20
P="--dtype bf16 --weight-dtype fp32 --n 8192 --m 8192"
for f in "ln-parallel:--kind layernorm --parallel" "ln-recompute:--kind layernorm --recompute-from-output" \
         "rms-gate:--kind rmsnorm --gate after-norm" "ln-plain:--kind layernorm"; do
  name=${f%%:*} flags=${f#*:}
  [ $SECONDS -lt 470 ] || break
  timeout 60 scripts/ncu-profile.sh $OUT/ncu $name -- $B/normjit tune $flags $P --cache-dir $(mktemp -d) > $OUT/ncu-$name.txt 2>&1
  echo "ncu $name: exit $? at $SECONDS s"; cat $OUT/ncu-$name.txt | head -12
done
mkdir -p /tmp/hb && cp $B/v/old /tmp/hb/normjit
[ $SECONDS -lt 500 ] && BUILD_DIR=/tmp/hb timeout $((580 - SECONDS)) scripts/tune-compare.sh $OUT/fwd --forward --until 40 \
  layernorm:bf16:12288 layernorm:bf16:8192 layernorm:bf16:14336 > $OUT/fwd.txt 2>&1
echo "fwd tune: exit $? at $SECONDS s"; cat $OUT/fwd/compare.txt 2>/dev/null | head -30
tar -C $OUT -czf $OUT/logs.tgz gpu-tests.txt environment.txt ncu fwd 2>/dev/null && rm -rf $OUT/gpu-tests.txt $OUT/environment.txt $OUT/ncu $OUT/fwd
