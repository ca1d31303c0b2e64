#!/usr/bin/env bash
# Session 17, call 13 (e32be31 and v/alt = e32be31 + an uncommitted rule: LayerNorm rows of 16-bit
# x with fp32 γ/β that take more than 512 threads at 16-byte slots use 8-byte slots, so γ's and
# β's loads are one 16-byte vector a slot). bench --forward inside the rule's range (N 16385-32768)
# and around it, both builds in one run, plain and graph.
set -uo pipefail
b=build-device; o=$OUT; w=$(mktemp -d)
scripts/gpu-environment.sh $b > $o/environment.txt 2>&1
for v in base alt; do
  bin=$b/normjit; [ $v != base ] && bin=$b/v/$v
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 100 $bin bench --forward --graph --kinds layernorm --dtypes bf16,fp16 --weights fp32 --n 16384,17408,20480,24576,28672,32768,36864 --json $w/bench-$v.json > $w/bench-$v.txt 2>&1
  echo "bench $v rc=$? at ${SECONDS}s"
done
python3 bench/compare_bench.py $w/bench-base.json $w/bench-alt.json | cut -c1-140
tar -C $w -czf $o/run.tgz .
