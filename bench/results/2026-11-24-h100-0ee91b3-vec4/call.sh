#!/usr/bin/env bash
# Session 16, call 7: shared-sums candidates at 4-wide vectors for bf16 rows with fp32 γ (γ's
# loads in whole sectors). Exhaustive tuning (graph replays, L2 flushed), LN/RMS bf16, fp32 γ,
# M·N = 64 Mi; then every GPU test (the shared-sums test runs every such candidate).
set -uo pipefail
b=build-device; o=$OUT; w=$(mktemp -d)
export NORMJIT_CACHE_DIR=$(mktemp -d)
for n in 4096 5120 7168 8192 12288 14336 16384 32768 65536 131072; do
  for k in layernorm rmsnorm; do
    timeout 60 $b/normjit tune --kind $k --n $n --m $((67108864 / n)) --dtype bf16 --weight-dtype fp32 --exhaustive >> $w/tune.txt 2>&1
  done
  echo "tuned $n at ${SECONDS}s"
done
python3 bench/tune_fits.py --family vec=4 $w/tune.txt 2>&1 | tee $w/fits.txt
BUILD_DIR=$b OUT=$w GPU_TEST_SHARDS=8 timeout 280 scripts/gpu-run.sh gpu-tests > $w/gpu-run.txt 2>&1
grep -hE "^\[  (FAILED|PASSED) " $w/gpu-tests.txt | sort | uniq -c; grep -E "^\[  FAILED" $w/gpu-tests.txt | head
echo "tests done at ${SECONDS}s"
tar -C $w -czf $o/results.tgz .
