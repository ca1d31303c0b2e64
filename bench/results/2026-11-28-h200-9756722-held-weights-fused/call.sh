#!/usr/bin/env bash
# Session 30, call 1 (H200), branch next/forward-shared-weights at 9756722 (main plus the
# forward's held weights): the forward GPU tests (two new ones pin held weights); exhaustive
# forward tuning of 16-bit rows with fp32 γ at 5120-16384, where held weights are candidates
# (heuristic against tuned in bench --graph); exhaustive tuning of the fused problems on the H200
# (issue 5: they still take the H100's rules) with the same comparison; the host breakdown
# (bench/host_breakdown.py, fixed last session, not rerun since).
set -uo pipefail
B=build-device
GPU_TEST_FILTER='Forward*' GPU_TEST_SHARDS=16 BUILD_DIR=$B OUT=$OUT timeout 150 scripts/gpu-run.sh gpu-tests > $OUT/gpu-run.txt 2>&1
echo "forward GPU tests: exit $? at $SECONDS s"; grep -E "^shard|FAILED" $OUT/gpu-run.txt | head -20
BUILD_DIR=$B timeout 170 scripts/tune-compare.sh $OUT/fwd --forward --until 100 \
  layernorm:bf16:{5120,6144,7168,8192,10240,12288,14336,16384} layernorm:fp16:{5120,8192,12288,16384} \
  rmsnorm:bf16:{8192,14336} > /dev/null 2>&1
echo "forward tune-compare: exit $? at $SECONDS s"; tail -2 $OUT/fwd/compare.txt
BUILD_DIR=$B timeout 230 scripts/tune-compare.sh $OUT/fused --until 170 \
  layernorm:bf16:{4096,8192,12288}:{residual,all,parallel,recompute} \
  rmsnorm:bf16:{4096,8192}:{gate,gate-before,parallel,recompute} > /dev/null 2>&1
echo "fused tune-compare: exit $? at $SECONDS s"; tail -2 $OUT/fused/compare.txt
export NORMJIT_LIBRARY=$PWD/$B/libnormjit.so
NORMJIT_CACHE_DIR=$(mktemp -d) timeout 60 python3 bench/host_breakdown.py > $OUT/host-breakdown.txt 2>&1
echo "host-breakdown: exit $? at $SECONDS s"
tar -C $OUT -czf $OUT/logs.tgz fwd fused gpu-tests.txt environment.txt && rm -rf $OUT/fwd $OUT/fused $OUT/gpu-tests.txt $OUT/environment.txt
