#!/usr/bin/env bash
# Session 48, call 1 (H200). build-device at 1807b69 (code of 4b26ad1), session 47's HEAD.
# 1. What ran on no GPU in session 47: BackwardPairedRows, BackwardSharedPrefetch and
#    BackwardPhasedRows (13001 / 14001 at 1024+ rows) at the current template; memcheck and
#    racecheck over BackwardPairedRows.
# 2. A bench of the mid-row rule's shapes (12288-16384), to confirm session 47's call 4.
# 3. Per-kernel time and DRAM bytes (ncu) of LayerNorm and RMSNorm bf16 (fp32 γ) at 16384,
#    32768 and 65536: the partial rows' reduction's share of LayerNorm's time.
set -uo pipefail
B=build-device
export NORMJIT_CACHE_DIR=$(mktemp -d)
GPU_TEST_SHARDS=16 GPU_TEST_FILTER='*BackwardPairedRows.*:BackwardSharedPrefetch.*:BackwardPhasedRows.*' BUILD_DIR=$B OUT=$OUT timeout 300 scripts/gpu-run.sh gpu-tests > $OUT/tests-run.txt 2>&1 &
tests=$!
SANITIZE_TOOLS="memcheck racecheck" SANITIZE_FILTER_memcheck='*BackwardPairedRows.*' SANITIZE_FILTER_racecheck='*BackwardPairedRows.*' \
  TIMEOUT_memcheck=200 TIMEOUT_racecheck=200 WARMUP_TIMEOUT=100 BUILD_DIR=$B OUT=$OUT scripts/gpu-sanitize.sh > $OUT/sanitize-run.txt 2>&1
echo "sanitize exit $? at $SECONDS s"; tail -4 $OUT/sanitize.txt
wait $tests; echo "tests exit $? at $SECONDS s"
grep -E '^\[  (PASSED|FAILED|SKIPPED) |Failure' $OUT/gpu-tests.txt | sort | uniq -c | head -30
grep -A6 Failure $OUT/gpu-tests.txt | head -30
$B/normjit bench --graph --kinds layernorm,rmsnorm --dtypes bf16 --weights fp32 --n 12288,12544,12800,13312,13824,14080,14336,14848,15360,15872,16384 > $OUT/bench-rule.txt 2>&1
echo "bench exit $? at $SECONDS s"; cat $OUT/bench-rule.txt
for k in layernorm rmsnorm; do for n in 16384 32768 65536; do
  timeout 100 python3 bench/dram_traffic.py --normjit $B/normjit --kind $k --dtype bf16 --weights fp32 --n $n
done; done > $OUT/dram.txt 2>&1
echo "dram exit $? at $SECONDS s"; cat $OUT/dram.txt
tar czf $OUT/call1-logs.tgz -C $OUT gpu-tests.txt tests-run.txt sanitize.txt sanitize-run.txt 2>/dev/null
