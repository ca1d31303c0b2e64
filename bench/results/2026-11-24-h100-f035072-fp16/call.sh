#!/usr/bin/env bash
# Session 14, call 1 (f035072): every GPU test (8 shards; first GPU run of 7597f1e's shared warm-up
# pool), then the fp16 anomaly of -968660e-peers/: profile.py (this folder) and `normjit bench` at
# the same shapes in fp16 and bf16 with same-dtype weights.
set -uo pipefail
b=build-device; o=$OUT; d=bench/results/2026-11-24-h100-f035072-fp16
scripts/gpu-environment.sh $b > $o/environment.txt 2>&1
export NORMJIT_CACHE_DIR=$(mktemp -d)
SECONDS=0
GPU_TEST_SHARDS=8 BUILD_DIR=$b OUT=$o timeout 360 scripts/gpu-run.sh tests > $o/gpu-run.txt 2>&1; echo "gpu-run tests exit $? in ${SECONDS}s" >> $o/gpu-run.txt
cat $o/gpu-run.txt | tail -14
export NORMJIT_LIBRARY="$(cd $b && pwd)/libnormjit.so"
PYTHONPATH=python timeout 150 python3 $d/profile.py > $o/profile.txt 2>&1; echo "profile exit $?" >> $o/profile.txt
cut -c1-250 $o/profile.txt
timeout 60 $b/normjit bench --dtypes fp16,bf16 --weights same --n 512,1000,2048,4096,7168,14336 > $o/bench.txt 2>&1; echo "bench exit $?" >> $o/bench.txt
cat $o/bench.txt
