#!/usr/bin/env bash
# Session 18, call 12: the session's rules inside their ranges, at sizes none of the fits
# timed: bench --graph with this commit's heuristic (new) and the session's first commit's
# (157fafe, old, build-device/v/old), twice, M·N = 64 Mi, fp32 γ.
set -uo pipefail
b=build-device; o=$OUT; w=$(mktemp -d)
B16="--graph --weights fp32 --dtypes bf16 --n 192,384,576,832,1152,1408,1664,1920,2176,2432,2688,2944,3200,3456,3712,3968,4032"
B32="--graph --weights fp32 --dtypes fp32 --n 17408,22528,26624,30720,34816,38912,43008,47104,51200,55296"
F16="--forward --graph --weights fp32 --dtypes bf16 --n 192,384,576,832,34816,38912,43008,47104,51200,61440,69632,90112"
F32="--forward --graph --weights fp32 --dtypes fp32 --n 69632,86016,110592,147456,180224"
for r in 1 2; do
  for s in old new; do bin=$b/normjit; [ $s = old ] && bin=$b/v/old
    for t in B16 B32 F16 F32; do
      NORMJIT_CACHE_DIR=$(mktemp -d) timeout 100 $bin bench ${!t} --json $w/$t-$s$r.json > $w/$t-$s$r.txt 2>&1
    done
  done
done
echo "benches at ${SECONDS}s"
for r in 1 2; do for t in B16 B32 F16 F32; do python3 bench/compare_bench.py $w/$t-old$r.json $w/$t-new$r.json | cut -c1-175; done; done
tar -C $w -czf $o/results.tgz .
