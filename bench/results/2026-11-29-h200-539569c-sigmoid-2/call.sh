#!/usr/bin/env bash
# Session 32, call 2 (H200): the gate's σ(z), two ways against main (539569c, build-device/normjit):
#   S1 = next/fast-sigmoid (ada7520, build-device/v/sig): __expf and rcp.approx;
#   S2 = __expf and the IEEE division (build-device/v/sig2), whose registers and spills match
#        main's (ptxas, sm_90), where S1 spills up to 340 bytes in fp16 and 224 in bf16.
# A/B main vs S2 (backward bf16/fp16/fp32, forward); S1 once on the same sets; S2's gate GPU
# tests; exhaustive tuning of S1 where its heuristic configs spill (can other configs win?).
set -uo pipefail
B=build-device
NB="--graph --kinds rmsnorm --weights fp32 --fused gate,gate-before"
NLIST=2048,4096,6144,8192,10240,12288,14336,16384,20480,24576,32768
mkdir -p $OUT/ab $OUT/s1
timeout 300 scripts/bench-ab.sh $B/normjit $B/v/sig2 $OUT/ab \
  gate "$NB --dtypes bf16 --n $NLIST" gate16 "$NB --dtypes fp16 --n 4096,8192,12288,16384,32768" \
  gate32 "$NB --dtypes fp32 --n 4096,8192,16384" \
  fwdgate "--forward $NB --dtypes bf16,fp16 --n 4096,8192,16384" > $OUT/ab.txt 2>&1
echo "ab: exit $? at $SECONDS s"; grep -E "median" $OUT/ab.txt | head
for s in "gate|--dtypes bf16 --n $NLIST" "gate16|--dtypes fp16 --n 4096,8192,12288,16384,32768" "fwdgate|--forward --dtypes bf16,fp16 --n 4096,8192,16384"; do
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 60 $B/v/sig bench $NB ${s#*|} --json $OUT/s1/${s%%|*}.json > $OUT/s1/${s%%|*}.txt 2>&1
done
echo "S1 runs: at $SECONDS s"
NORMJIT_CACHE_DIR=$(mktemp -d) timeout 80 $B/v/sig2-gpu-tests --gtest_filter='*Gate*:*gate*' > $OUT/sig2-gate-tests.txt 2>&1
echo "S2 gate tests: exit $? at $SECONDS s"; grep -E "^\[  (PASSED|FAILED) " $OUT/sig2-gate-tests.txt | head
BUILD_DIR=$B/v/s1 timeout $((560 - SECONDS)) scripts/tune-compare.sh $OUT/tune --until $((470 - SECONDS)) \
  rmsnorm:bf16:{8192,12288}:gate-before rmsnorm:bf16:{12288,32768}:gate rmsnorm:fp16:{4096,8192}:gate rmsnorm:fp16:8192:gate-before > /dev/null 2>&1
echo "S1 tune-compare: exit $? at $SECONDS s"; tail -3 $OUT/tune/compare.txt
tar -C $OUT -czf $OUT/logs.tgz ab s1 tune sig2-gate-tests.txt && rm -rf $OUT/ab $OUT/s1 $OUT/tune $OUT/sig2-gate-tests.txt
