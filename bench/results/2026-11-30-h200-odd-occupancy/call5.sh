#!/usr/bin/env bash
# Session 54, call 5 (H200). build-device = the V rule's commit plus W.diff and X.diff
# (uncommitted): W, the forward's 16-bit register clusters prefetch the next row on memory-rich
# devices where each cluster takes two rows or more (call 4's tune: RMS 1.18-1.21x, LN
# 1.04-1.09x); X, LayerNorm's element blocks of 224 threads (3073-3584) widen to 256, three an
# SM at 80 registers (call 4's tune: 1.04-1.15x). v/old = ee73885's normjit (neither).
# 1. A/B, bench --graph, two rounds: X at LN 3073-3583 odd; W at 40960-262144, both kinds.
# 2. GPU tests: the forward's memory-rich configs pinned (adds 16-bit clusters), Forward.*,
#    BackwardFewGroups at 3329 (X). 3. `tune --forward --config` at 32768 (one 1024-thread block
#    of four slots): prefetching too? 4. The Python package's GPU tests (4 shards).
set -uo pipefail
B=build-device
scripts/gpu-environment.sh $B > $OUT/environment.txt 2>&1
mkdir -p $OUT/ab
scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab \
  ln224 "--graph --kinds layernorm --dtypes bf16,fp16 --weights fp32,same --n 3073,3201,3329,3457,3583" \
  fwd "--forward --graph --dtypes bf16,fp16 --weights fp32,same --n 40960,65536,98304,131072,196608,262144" > $OUT/ab.txt 2>&1
echo "ab exit $? at $SECONDS s"
grep -E "^(layer|rms)|median" $OUT/ab.txt | sed -E 's/threads_per_row=[0-9]+ //; s/registers //; s/shared_weights //' | cut -c1-140
GPU_TEST_SHARDS=4 GPU_TEST_FILTER='ForwardTuning.MemoryRich*:Forward.*:EveryN/BackwardFewGroups.*/N3329' \
  BUILD_DIR=$B OUT=$OUT timeout 200 scripts/gpu-run.sh gpu-tests > $OUT/tests-run.txt 2>&1
echo "tests exit $? at $SECONDS s"; grep -hE '^\[  (PASSED|FAILED|SKIPPED) |OK \]|Failure' $OUT/gpu-tests*.txt | sort | uniq -c | head -20
{
for k in layernorm rmsnorm; do for w in fp32 bf16; do
  c=$(NORMJIT_CACHE_DIR=$(mktemp -d) $B/normjit tune --forward --kind $k --n 32768 --dtype bf16 --weight-dtype $w --m 2048 --list --memory-rate 18.4 | sed -n '/sm_90/{n;p}' | sed 's/^ *//')
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 60 $B/normjit tune --forward --kind $k --n 32768 --m 2048 --dtype bf16 --weight-dtype $w --config "$c prefetch" 2>>$OUT/tune.err |
    grep -E "^(  config )?(rms|layer)norm" | sed -E "s/^/$w /; s/x=[a-z0-9]+ y=[a-z0-9]+ //; s/threads_per_row=[0-9]+ //"
done; done
} > $OUT/tune-32768.txt
echo "tune exit $? at $SECONDS s"; cut -c1-200 $OUT/tune-32768.txt
NORMJIT_CACHE_DIR=$(mktemp -d) NORMJIT_LIBRARY=$PWD/$B/libnormjit.so timeout 240 python3 python/tests/run.py --shards 4 > $OUT/python-tests.txt 2>&1
echo "python exit $? at $SECONDS s"; tail -4 $OUT/python-tests.txt
tar czf $OUT/call5-logs.tgz -C $OUT ab gpu-tests.txt tests-run.txt 2>/dev/null; rm -rf $OUT/ab
