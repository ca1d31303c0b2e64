#!/usr/bin/env bash
# Session 17, call 7 (5e666d1): LayerNorm forward rows meeting once with the approximate reciprocal.
# v/alt1 = 5e666d1 with one meeting (moments) for rows of any block size (approximate reciprocal
# beyond 256 threads); v/alt2 = alt1 and clusters meeting once too. bench --forward of
# LayerNorm with the three builds; exhaustive forward tuning of shapes.toml with each.
set -uo pipefail
b=build-device; o=$OUT; w=$(mktemp -d); d=bench/results/2026-11-24-h100-5e666d1-forward-one-meeting
scripts/gpu-environment.sh $b > $o/environment.txt 2>&1
for v in new alt1 alt2; do
  bin=$b/normjit; [ $v != new ] && bin=$b/v/$v
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 100 $bin bench --forward --kinds layernorm --dtypes bf16,fp32 --weights fp32 --json $w/bench-$v.json > $w/bench-$v.txt 2>&1
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 100 $bin tune --forward --exhaustive --shapes $d/shapes.toml > $w/tune-$v.txt 2>&1
  echo "$v done at ${SECONDS}s"
done
for v in alt1 alt2; do echo "== $v against new"; python3 bench/compare_bench.py $w/bench-new.json $w/bench-$v.json | cut -c1-130; done
for v in new alt1 alt2; do echo "== tune $v"; grep -E "^(layernorm|rmsnorm)" $w/tune-$v.txt | sed -E 's/ +/ /g; s/weight=fp32 .bias align=16//' | cut -c1-250; done
tar -C $w -czf $o/run.tgz .
