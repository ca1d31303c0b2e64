#!/usr/bin/env bash
# Session 18, call 2: data for two refits. (a) The forward's streamed LayerNorm rows (16-bit,
# N > 32768): exhaustive tuning over 13 N with the wider streamed candidates of this commit
# (256-thread blocks, balanced thread counts), bf16, fp16 at three N. (b) The backward's fp32
# register clusters at 16384-32768: exhaustive tuning, LN and RMS. Then bench --graph of those
# shapes with the heuristic and with the tuned database, twice.
set -uo pipefail
b=build-device; o=$OUT; w=$(mktemp -d)
heur=$(mktemp -d); tuned=$(mktemp -d)
FN="33792 36864 40960 45056 49152 57344 65536 81920 98304 131072 196608 262144 524288"
BN="16384 20480 24576 28672 32768"
{ for n in $FN; do printf '[[problem]]\nkind = "layernorm"\nn = %d\ndtype = "bf16"\nweight_dtype = "fp32"\nm = [%d]\n\n' $n $((67108864/n)); done
  for n in 36864 49152 131072; do printf '[[problem]]\nkind = "layernorm"\nn = %d\ndtype = "fp16"\nweight_dtype = "fp32"\nm = [%d]\n\n' $n $((67108864/n)); done; } > $w/fwd.toml
{ for k in layernorm rmsnorm; do for n in $BN; do printf '[[problem]]\nkind = "%s"\nn = %d\ndtype = "fp32"\nweight_dtype = "fp32"\nm = [%d]\n\n' $k $n $((67108864/n)); done; done; } > $w/bwd.toml
NORMJIT_CACHE_DIR=$tuned timeout 200 $b/normjit tune --forward --exhaustive --shapes $w/fwd.toml > $w/tune-forward.txt 2>$w/tune-err.txt; echo "forward tune exit $? at ${SECONDS}s"
python3 bench/tune_fits.py $w/tune-forward.txt --family streamed | cut -c1-170
NORMJIT_CACHE_DIR=$tuned timeout 150 $b/normjit tune --exhaustive --shapes $w/bwd.toml > $w/tune.txt 2>>$w/tune-err.txt; echo "tune exit $? at ${SECONDS}s"
python3 bench/tune_fits.py $w/tune.txt --family shared_sums | cut -c1-170
F="--forward --graph --kinds layernorm --weights fp32 --dtypes bf16 --n ${FN// /,}"
F16="--forward --graph --kinds layernorm --weights fp32 --dtypes fp16 --n 36864,49152,131072"
B="--graph --weights fp32 --dtypes fp32 --n ${BN// /,}"
for r in 1 2; do
  for s in heur tuned; do dir=$heur; [ $s = tuned ] && dir=$tuned
    NORMJIT_CACHE_DIR=$dir timeout 60 $b/normjit bench $F --json $w/fwd-$s$r.json > $w/fwd-$s$r.txt 2>&1
    NORMJIT_CACHE_DIR=$dir timeout 60 $b/normjit bench $F16 --json $w/fwd16-$s$r.json > $w/fwd16-$s$r.txt 2>&1
    NORMJIT_CACHE_DIR=$dir timeout 60 $b/normjit bench $B --json $w/bwd-$s$r.json > $w/bwd-$s$r.txt 2>&1
  done
done
echo "benches at ${SECONDS}s"
for r in 1 2; do for t in fwd fwd16 bwd; do python3 bench/compare_bench.py $w/$t-heur$r.json $w/$t-tuned$r.json | cut -c1-170; done; done
tar -C $w -czf $o/results.tgz .
