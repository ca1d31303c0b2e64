#!/usr/bin/env bash
# Session 44, call 1 (H200). build-device = this script's commit + the reduction's L2 discard
# (working tree); build-device/v/old = normjit at 1fda0ec (no discard).
# 1. memcheck over the phased tests of both passes (session 43's call9.sh: rows shorter than a
#    16-byte chunk are no longer phased; the forward test's N = 3 case is N = 9).
# 2. A/B: nj_reduce_partials drops the partial rows' lines from L2 once read (discard.global.L2),
#    so their dirty lines are not written back to DRAM. Prediction: LayerNorm shapes with 7-8%
#    partial traffic (12288-262144) gain up to ~4%, RMSNorm ~2%, shapes without partials nothing.
# 3. merge = 2 (sm_90 clusters adding dγ/dβ before one partial row) against 1 where the config can
#    merge: entry 21 found it 1.5-10% slower, many kernel changes ago.
set -uo pipefail
B=build-device
s=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
NORMJIT_CACHE_DIR=$(mktemp -d) timeout 150 $s --tool memcheck --error-exitcode 9 $B/tests/normjit_gpu_tests \
  --gtest_filter='ForwardTuning.PhasedRowsMatchTheReference:BackwardPhasedRows.*:Tuning.PhasedRowsInEveryBlockShapeMatchTheReference' > $OUT/memcheck.txt 2>&1
echo "memcheck exit $? at $SECONDS s"; grep -E "ERROR SUMMARY|PASSED|FAILED|Invalid" $OUT/memcheck.txt | head -12
mkdir -p $OUT/ab
scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab \
  bwd "--graph --dtypes bf16 --weights same --n 4096,8192,12288,14336,16384,32768,65536,131072,262144,1048576,5003"
echo "ab exit $? at $SECONDS s"
NORMJIT_CACHE_DIR=$(mktemp -d) timeout 120 $B/normjit bench --graph --merge 1,2,4 --kinds layernorm,rmsnorm --dtypes bf16 --weights same \
  --n 2048,4096,5003,8192,12288,14336 > $OUT/merge.txt 2>&1
echo "merge exit $? at $SECONDS s"; cat $OUT/merge.txt | cut -c1-200 | tail -40
gzip $OUT/memcheck.txt
tar czf $OUT/call1-logs.tgz -C $OUT ab merge.txt memcheck.txt.gz; rm -rf $OUT/ab $OUT/merge.txt $OUT/memcheck.txt.gz
