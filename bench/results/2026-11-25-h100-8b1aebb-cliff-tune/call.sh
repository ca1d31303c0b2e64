#!/usr/bin/env bash
# Session 18, call 5: exhaustive tuning of the cliffs call 4 found (backward: bf16 2560-3584,
# 9216-10240, 81920-196608; fp32 36864-163840; forward: fp32 LN 81920-163840, bf16 LN
# 163840-196608), then bench --graph of them with the heuristic and with the tuned database.
set -uo pipefail
b=build-device; o=$OUT; w=$(mktemp -d)
heur=$(mktemp -d); tuned=$(mktemp -d)
shape() { printf '[[problem]]\nkind = "%s"\nn = %d\ndtype = "%s"\nweight_dtype = "fp32"\nm = [%d]\n\n' $1 $2 $3 $((67108864/$2)); }
BB="2560 3072 3584 9216 10240 81920 98304 163840 196608"; BF="36864 40960 49152 57344 81920 98304 163840"
{ for k in layernorm rmsnorm; do for n in $BB; do shape $k $n bf16; done; for n in $BF; do shape $k $n fp32; done; done; } > $w/bwd.toml
{ for n in 81920 98304 163840; do shape layernorm $n fp32; done; for n in 163840 196608; do shape layernorm $n bf16; done; shape rmsnorm 163840 fp32; } > $w/fwd.toml
NORMJIT_CACHE_DIR=$tuned timeout 300 $b/normjit tune --exhaustive --shapes $w/bwd.toml > $w/tune.txt 2>$w/tune-err.txt; echo "tune exit $? at ${SECONDS}s"
NORMJIT_CACHE_DIR=$tuned timeout 90 $b/normjit tune --forward --exhaustive --shapes $w/fwd.toml > $w/tune-forward.txt 2>>$w/tune-err.txt; echo "forward tune exit $? at ${SECONDS}s"
B16="--graph --weights fp32 --dtypes bf16 --n ${BB// /,}"; B32="--graph --weights fp32 --dtypes fp32 --n ${BF// /,}"
F="--forward --graph --weights fp32 --dtypes bf16,fp32 --n 81920,98304,163840,196608"
for s in heur tuned; do dir=$heur; [ $s = tuned ] && dir=$tuned
  NORMJIT_CACHE_DIR=$dir timeout 60 $b/normjit bench $B16 --json $w/b16-$s.json > $w/b16-$s.txt 2>&1
  NORMJIT_CACHE_DIR=$dir timeout 60 $b/normjit bench $B32 --json $w/b32-$s.json > $w/b32-$s.txt 2>&1
  NORMJIT_CACHE_DIR=$dir timeout 60 $b/normjit bench $F --json $w/fwd-$s.json > $w/fwd-$s.txt 2>&1
done
echo "benches at ${SECONDS}s"
for t in b16 b32 fwd; do python3 bench/compare_bench.py $w/$t-heur.json $w/$t-tuned.json | cut -c1-190; done
tar -C $w -czf $o/results.tgz .
