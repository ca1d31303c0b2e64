#!/usr/bin/env bash
# Session 28, call 2 (H200), 0299eca: the Python package's GPU tests, the transformer example,
# host overhead and the modules' host-time breakdown (scripts/gpu-python.sh); the forward sweep;
# an A/B against 88bbb02's normjit (build-device/v/old) on the fused cluster shapes the rule
# change moves (bf16 and fp16); LayerNorm's merged pairs asked again (partial-row traffic).
set -uo pipefail
B=build-device
mkdir -p $OUT/ab
BUILD_DIR=$B OUT=$OUT timeout 270 scripts/gpu-python.sh > $OUT/python-run.txt 2>&1
echo "python: exit $?"; grep -E "^python:|curves|=====.*exit" $OUT/python.txt | head -20
export NORMJIT_CACHE_DIR=$(mktemp -d)
timeout 110 $B/normjit bench --forward --graph --json $OUT/bench-forward.json > $OUT/bench-forward.txt 2>&1; echo "bench forward: exit $?"
A="--graph --dtypes bf16,fp16 --weights fp32 --n 32768,65536,131072 --fused residual,all"
timeout 150 scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab fused "$A" > $OUT/ab.txt 2>&1
cat $OUT/ab.txt | tail -3
timeout 50 $B/normjit bench --graph --merge 1,2 --kinds layernorm --dtypes bf16,fp16 --weights fp32 \
  --n 5120,7168,8192,12288,14336,16384 --json $OUT/merge.json > $OUT/merge.txt 2>&1; echo "merge: exit $?"
tar -C $OUT -czf $OUT/logs.tgz ab && rm -rf $OUT/ab
