#!/usr/bin/env bash
# Session 43, call 4 (H200): build-device = the commit of this script (kernels as call 3's).
# 1. The Python tests again, four processes at once: call 3's one failure
#    (GateAndParallelTest.test_parallel_norms, RMS M=199 N=1 fp32: dweight1 1.9e-5 against 1e-5,
#    a column sum of ±1 terms that cancels) now measured against its terms' norm, as the C++
#    suite and BackwardMatrixTest do.
# 2. Leads for issue 5's recompute-from-output (0.70 of the option-free row at LN bf16 4096):
#    candidates of the option-free row's shapes timed with it (tune --config, M = 16384), and
#    Nsight Compute of its heuristic's kernel.
set -uo pipefail
B=build-device
export NORMJIT_LIBRARY=$PWD/$B/libnormjit.so
NORMJIT_CACHE_DIR=$(mktemp -d) timeout 200 python3 python/tests/run.py --shards 4 > $OUT/python-tests.txt 2>&1
echo "python tests exit $? at $SECONDS s"; grep -E "^python:|^===== shard" $OUT/python-tests.txt; grep -E "^(ERROR|FAIL):" $OUT/python-tests.txt | head
grep -E "worst normwise error parallel|worst normwise error (after|before)_norm" $OUT/python-tests.txt | head -20
export NORMJIT_CACHE_DIR=$(mktemp -d)
P="--kind layernorm --n 4096 --dtype bf16 --weight-dtype fp32 --m 16384"
args=()
for cfg in "threads=512 threads_per_row=512 vec=8 registers prefetch min_blocks=2" \
           "threads=512 threads_per_row=512 vec=8 registers min_blocks=2" \
           "threads=256 threads_per_row=256 vec=8 registers cluster=2 prefetch min_blocks=4 shared_sums shared_weights" \
           "threads=256 threads_per_row=256 vec=8 registers min_blocks=4 shared_sums shared_weights" \
           "threads=256 threads_per_row=256 vec=8 registers min_blocks=4 shared_sums" \
           "threads=512 threads_per_row=512 vec=8 registers min_blocks=2 shared_sums shared_weights"; do
  args+=(--config "$cfg")
done
for f in "" --recompute-from-output; do
  timeout 60 $B/normjit tune $P $f "${args[@]}" > $OUT/tune-recompute$f.txt 2>&1
  echo "tune '$f' exit $? at $SECONDS s"; grep -E "^\s+config" $OUT/tune-recompute$f.txt | sed -E 's/.*M<=[0-9]+ \| //'
done
for f in "" --recompute-from-output; do
  timeout 120 scripts/ncu-profile.sh $OUT/ncu ln4096$f -- $B/normjit tune $P $f --config "threads=256 threads_per_row=256 vec=4 registers"
  echo "ncu '$f' at $SECONDS s"; head -40 $OUT/ncu/ln4096$f-stalls.txt
done
rm -f $OUT/ncu/*-sass.csv
tar czf $OUT/call4-logs.tgz -C $OUT python-tests.txt $(cd $OUT && ls tune-recompute*.txt) ncu && rm -rf $OUT/python-tests.txt $OUT/tune-recompute*.txt $OUT/ncu
