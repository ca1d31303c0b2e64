#!/usr/bin/env bash
# Session 41, call 5 (H200): build-device = the commit of this script. The forward's lesson
# (calls 2-4) applied to the backward: a prefetching block's packed phased rows now load whole
# chunks with nothing after them and are made the row where first worked (complete_phased_row);
# before, the edge chunks' branches met in register moves that waited for the next row's loads.
# The backward's phased GPU tests (new pinned prefetching cases), then a tune of odd N: do the
# prefetching phased candidates now win?
set -uo pipefail
B=build-device
GPU_TEST_SHARDS=8 GPU_TEST_FILTER='Tuning.Phased*:BackwardPhasedRows.*' BUILD_DIR=$B OUT=$OUT timeout 200 scripts/gpu-run.sh gpu-tests > $OUT/gpu-run.txt 2>&1
echo "phased tests exit $? at $SECONDS s"
grep -hE "^\[  (PASSED|FAILED) " $OUT/gpu-tests.txt | sort | uniq -c; grep -E "^\[  FAILED  \]|Failure|Expected|Which is" $OUT/gpu-tests.txt | head -20
tar czf $OUT/logs.tgz -C $OUT gpu-run.txt gpu-tests.txt environment.txt && rm -f $OUT/gpu-run.txt $OUT/gpu-tests.txt
export NORMJIT_CACHE_DIR=$(mktemp -d)
for kind in layernorm rmsnorm; do for n in 4095 5003 6001 8191 12289; do
  [ $SECONDS -lt 450 ] && timeout 40 $B/normjit tune --kind $kind --n $n --dtype bf16 --weight-dtype fp32 --align 2 --m 16384 2>&1
done; done > $OUT/tune-log.txt
echo "tune at $SECONDS s"
grep -hE "^(layer|rms)norm N" $OUT/tune-log.txt | tr -s ' ' | cut -c1-230
grep -E " time [0-9]+/" $OUT/tune-log.txt | grep "phased" | sed -E 's/^.*\] (layernorm|rmsnorm) N=([0-9]+).* time ([0-9]+)\/[0-9]+ /\1 \2 #\3 /; s/threads_per_row=[0-9]+ //' | cut -c1-120
