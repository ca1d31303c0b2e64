#!/usr/bin/env bash
# Session 18, call 1: (a) clusters of smaller blocks, more an SM (search space up to 4x the
# smallest cluster), exhaustive tuning of bench/tune-more-blocks.toml and of four fused
# problems; then bench --graph at those shapes with the heuristic and with the tuned database.
# (b) the forward's tuner-only gains of session 17 (LN bf16 36864, 131072, 262144; RMS 131072)
# checked in bench the same way.
set -uo pipefail
b=build-device; o=$OUT; w=$(mktemp -d)
heur=$(mktemp -d); tuned=$(mktemp -d)
NORMJIT_CACHE_DIR=$tuned timeout 200 $b/normjit tune --exhaustive --shapes bench/tune-more-blocks.toml > $w/tune.txt 2>$w/tune-err.txt; echo "tune exit $? at ${SECONDS}s"
python3 bench/tune_fits.py $w/tune.txt --family min_blocks=4 | cut -c1-200
for f in "--kind layernorm --parallel --m 2048 --n 32768" "--kind layernorm --parallel --m 8192 --n 8192" "--kind rmsnorm --gate after-norm --m 2048 --n 32768" "--kind layernorm --recompute-from-output --m 2048 --n 32768"; do
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 60 $b/normjit tune --exhaustive --dtype bf16 --weight-dtype fp32 $f >> $w/tune-fused.txt 2>>$w/tune-err.txt; done
echo "fused tune at ${SECONDS}s"
python3 bench/tune_fits.py $w/tune-fused.txt --family min_blocks=4 | cut -c1-200
cat > $w/fwd.toml <<'T'
[[problem]]
kind = "layernorm"
n = [36864, 131072, 262144]
dtype = "bf16"
weight_dtype = "fp32"
m = [1820, 512, 256]
[[problem]]
kind = "rmsnorm"
n = 131072
dtype = "bf16"
weight_dtype = "fp32"
m = [512]
T
NORMJIT_CACHE_DIR=$tuned timeout 100 $b/normjit tune --forward --shapes $w/fwd.toml > $w/tune-forward.txt 2>>$w/tune-err.txt; echo "forward tune exit $? at ${SECONDS}s"; tail -8 $w/tune-forward.txt
B="--graph --weights fp32 --dtypes bf16,fp32 --n 12288,16384,32768,65536"
F="--forward --graph --weights fp32 --dtypes bf16 --n 36864,131072,262144"
for r in 1 2; do
NORMJIT_CACHE_DIR=$heur timeout 60 $b/normjit bench $B --json $w/bench-heur$r.json > $w/bench-heur$r.txt 2>&1
NORMJIT_CACHE_DIR=$tuned timeout 60 $b/normjit bench $B --json $w/bench-tuned$r.json > $w/bench-tuned$r.txt 2>&1
NORMJIT_CACHE_DIR=$heur timeout 60 $b/normjit bench $F --json $w/fwd-heur$r.json > $w/fwd-heur$r.txt 2>&1
NORMJIT_CACHE_DIR=$tuned timeout 60 $b/normjit bench $F --json $w/fwd-tuned$r.json > $w/fwd-tuned$r.txt 2>&1
done
echo "benches at ${SECONDS}s"
for r in 1 2; do python3 bench/compare_bench.py $w/bench-heur$r.json $w/bench-tuned$r.json --changed | cut -c1-170; python3 bench/compare_bench.py $w/fwd-heur$r.json $w/fwd-tuned$r.json --changed | cut -c1-170; done
tar -C $w -czf $o/results.tgz .
