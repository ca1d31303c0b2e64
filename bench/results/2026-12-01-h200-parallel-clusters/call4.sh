#!/usr/bin/env bash
# Session 60, call 4 (H200). build-device: the rule as call 3 with its thread bounds (LayerNorm
# to 384 threads, RMSNorm to 448).
# 1. The whole GPU suite, 16 shards.
# 2. Tuning for the next question: do the gate and the recompute at 16385-32768 gain from the
#    same clusters of four blocks of two slots, two an SM? (They take clusters of two of one
#    block an SM there.) Exhaustive, and --config beside it, bf16 with fp32 γ.
set -uo pipefail
B=build-device
GPU_TEST_SHARDS=16 BUILD_DIR=$B OUT=$OUT timeout 400 scripts/gpu-run.sh gpu-tests > $OUT/tests-run.txt 2>&1
echo "tests exit $? at $SECONDS s"
grep -hE '^\[  (PASSED|FAILED|SKIPPED) ' $OUT/gpu-tests*.txt | sort | uniq -c | head; grep -h -B2 -A8 'Failure' $OUT/gpu-tests*.txt | head -40
grep -h "tests from .* ran\|SKIPPED \]" $OUT/gpu-tests*.txt | awk '{s+=$2} END {print "tests ran:", s}'
mkdir -p $OUT/logs
tune() {  # name, then normjit tune's arguments
  local name=$1; shift
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 60 $B/normjit tune "$@" > $OUT/logs/$name.txt 2>&1
  echo "$name exit $? at $SECONDS s"
}
cfg() { echo "threads=$1 threads_per_row=$1 vec=8 registers cluster=$2 min_blocks=$3 shared_sums"; }
while read -r k n m opt; do
  o=${opt//[^a-z]/}
  tune ex-$k-$n-$o --exhaustive --kind $k --dtype bf16 --weight-dtype fp32 --n $n --m $m $opt
  tune cfg-$k-$n-$o --kind $k --dtype bf16 --weight-dtype fp32 --n $n --m $m $opt \
    --config "$(cfg $((n / 64)) 4 2)" --config "$(cfg $((n / 128)) 8 4)" --config "$(cfg $((n / 128)) 8 3)"
done <<'SHAPES'
layernorm 20480 3276 --recompute-from-output
layernorm 24576 2730 --recompute-from-output
layernorm 32768 2048 --recompute-from-output
rmsnorm 24576 2730 --recompute-from-output
rmsnorm 32768 2048 --recompute-from-output
rmsnorm 20480 3276 --gate=after-norm
rmsnorm 24576 2730 --gate=after-norm
rmsnorm 24576 2730 --gate=before-norm
SHAPES
echo "== summary"
grep -h "exhaustive best" $OUT/logs/ex-*.txt | sed 's/  */ /g; s/threads_per_row=[0-9]* //g; s/x=.*align=16//' | cut -c1-330
for f in $OUT/logs/cfg-*.txt; do echo "-- $(basename $f)"; grep -E "^ *config |does not fit" $f | sed 's/  */ /g; s/x=.*M<=/M<=/; s/threads_per_row=[0-9]* //' | cut -c1-200; done
mv $OUT/gpu-tests*.txt $OUT/tests-run.txt $OUT/logs/ 2>/dev/null
tar czf $OUT/call4.tgz -C $OUT logs && rm -rf $OUT/logs
