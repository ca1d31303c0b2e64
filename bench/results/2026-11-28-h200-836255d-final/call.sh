#!/usr/bin/env bash
# Session 29, call 3 (H200): the session's rules (backward and forward memory-rich rules as
# narrowed by calls 1-2). The forward GPU tests (the pinned memory-rich configs now at the N the
# rule takes); the backward sweep with small-M latency; the forward sweep; the fused scan at
# model widths (issue 5: bf16, fp32 γ); peers in fp16 as time allows.
set -uo pipefail
B=build-device
GPU_TEST_FILTER='Forward*' GPU_TEST_SHARDS=16 BUILD_DIR=$B OUT=$OUT timeout 150 scripts/gpu-run.sh gpu-tests > $OUT/gpu-run.txt 2>&1
echo "forward GPU tests: exit $? at $SECONDS s"; grep -E "FAILED" $OUT/gpu-run.txt | head -20
NORMJIT_CACHE_DIR=$(mktemp -d) timeout 170 $B/normjit bench --latency --graph --json $OUT/bench.json > $OUT/bench.txt 2>&1
echo "bench: exit $? at $SECONDS s"; head -2 $OUT/bench.txt
NORMJIT_CACHE_DIR=$(mktemp -d) timeout 140 $B/normjit bench --forward --graph --json $OUT/bench-forward.json > $OUT/bench-forward.txt 2>&1
echo "bench forward: exit $? at $SECONDS s"
NORMJIT_CACHE_DIR=$(mktemp -d) timeout $((540 - SECONDS)) $B/normjit bench --graph --dtypes bf16 --weights fp32 \
  --n 1280,2560,4096,5120,8192,12288,14336,16384 --fused residual,all,gate,gate-before,parallel,recompute \
  --json $OUT/fused.json > $OUT/fused.txt 2>&1; echo "fused: exit $? at $SECONDS s"
tar -C $OUT -czf $OUT/logs.tgz gpu-tests.txt environment.txt && rm -f $OUT/gpu-tests.txt $OUT/environment.txt
