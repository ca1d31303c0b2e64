#!/usr/bin/env bash
# Session 23, call 3 (working tree on 5ed1f96: the forward's rows of at most 8 elements a thread
# bounded to fill the SM, with the engine's fallback where that spills; LayerNorm rows of more
# than 512 threads meeting once with warp-shifted moments; plus a hook not committed,
# NJ_EXP_NOWM=1, which turns the latter off). The forward GPU tests, then A/B timings: 5ed1f96's
# binary (v/old) against this one, and this one without the warp-shifted moments (v/nowm).
# (Run twice: the first run, with the fallback read from ptxas's report in NVRTC's log, kept
# spilling blocks at random -- the log does not always carry it; this run asks the loaded kernel.)
set -uo pipefail
b=build-device; o=$OUT; w=$(mktemp -d)
GPU_TEST_SHARDS=8 GPU_TEST_FILTER='Forward*' BUILD_DIR=$b OUT=$o/tests scripts/gpu-run.sh gpu-tests > $o/tests.txt 2>&1
echo "tests rc=$? at ${SECONDS}s"; grep -h "PASSED\|FAILED\|Failure" $o/tests/*.txt | sort | uniq -c
scripts/bench-ab.sh $b/v/old $b/normjit $w \
  odd "--forward --graph --weights fp32 --dtypes bf16,fp32 --n 1025,1537,2049,2561,3001,3585,4095,5003,6001,8191,12289,16385,24577" \
  wide "--forward --graph --kinds layernorm --weights fp32 --dtypes bf16,fp32 --n 12288,14336,16384,24576" > $o/ab-fill.txt 2>&1
echo "fill done at ${SECONDS}s"; cat $o/ab-fill.txt
scripts/bench-ab.sh $b/v/nowm $b/normjit $w \
  wm "--forward --graph --kinds layernorm --weights fp32 --dtypes bf16,fp32 --n 5003,6001,8191,12289,16385,24577,12288,14336,16384" > $o/ab-wm.txt 2>&1
echo "wm done at ${SECONDS}s"; cat $o/ab-wm.txt
(cd $w && tar -czf $o/results.tgz *.json)
