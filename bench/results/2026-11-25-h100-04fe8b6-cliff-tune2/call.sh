#!/usr/bin/env bash
# Session 18, call 9: exhaustive tuning of the cliffs call 8 found (backward 16-bit 320, 1280,
# 1536, 1792; forward LN bf16 320), bf16 with fp32 γ, M·N = 64 Mi, then bench --graph with the
# heuristic and with the tuned database (bf16 with fp32 and bf16 γ, and fp16).
set -uo pipefail
b=build-device; o=$OUT; w=$(mktemp -d)
heur=$(mktemp -d); tuned=$(mktemp -d)
shape() { printf '[[problem]]\nkind = "%s"\nn = %d\ndtype = "%s"\nweight_dtype = "%s"\nm = [%d]\n\n' $1 $2 $3 $4 $((67108864/$2)); }
{ for k in layernorm rmsnorm; do for n in 320 1280 1536 1792; do shape $k $n bf16 fp32; shape $k $n bf16 bf16; shape $k $n fp16 fp32; done; done; } > $w/bwd.toml
{ shape layernorm 320 bf16 fp32; shape rmsnorm 320 bf16 fp32; } > $w/fwd.toml
NORMJIT_CACHE_DIR=$tuned timeout 240 $b/normjit tune --exhaustive --shapes $w/bwd.toml > $w/tune.txt 2>$w/tune-err.txt; echo "tune exit $? at ${SECONDS}s"
NORMJIT_CACHE_DIR=$tuned timeout 60 $b/normjit tune --forward --exhaustive --shapes $w/fwd.toml > $w/tune-forward.txt 2>>$w/tune-err.txt; echo "forward tune exit $? at ${SECONDS}s"
B="--graph --weights fp32,same --dtypes bf16,fp16 --n 320,1280,1536,1792"
F="--forward --graph --weights fp32 --dtypes bf16 --n 320"
for s in heur tuned; do dir=$heur; [ $s = tuned ] && dir=$tuned
  NORMJIT_CACHE_DIR=$dir timeout 90 $b/normjit bench $B --json $w/bwd-$s.json > $w/bwd-$s.txt 2>&1
  NORMJIT_CACHE_DIR=$dir timeout 60 $b/normjit bench $F --json $w/fwd-$s.json > $w/fwd-$s.txt 2>&1
done
echo "benches at ${SECONDS}s"
for t in bwd fwd; do python3 bench/compare_bench.py $w/$t-heur.json $w/$t-tuned.json | cut -c1-185; done
tar -C $w -czf $o/results.tgz .
