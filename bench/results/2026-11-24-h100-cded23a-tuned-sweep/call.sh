#!/usr/bin/env bash
# Session 16, call 10: what tuning buys in `normjit bench` (no L2 flush) over the heuristic, at
# every bf16 (fp32 γ) shape of the sweep: bench with the heuristic; `normjit tune` of the same
# shapes (bench/tune-sweep.toml's bf16 / fp32-weight entries) into a tuning database; bench
# again reading it (tune.mode = cached), then the heuristic once more (order effects).
set -uo pipefail
b=build-device; o=$OUT; w=$(mktemp -d)
python3 - bench/tune-sweep.toml > $w/bf16.toml <<'PY'
import sys
text = open(sys.argv[1]).read()
blocks = text.split('[[problem]]')
keep = [b for b in blocks[1:] if 'dtype = "bf16"' in b and 'weight_dtype = "fp32"' in b]
print('\n'.join('[[problem]]' + b.rstrip() + '\n' for b in keep))
PY
grep -c "problem" $w/bf16.toml
heur=$(mktemp -d); tuned=$(mktemp -d)
NORMJIT_CACHE_DIR=$heur timeout 90 $b/normjit bench --graph --dtypes bf16 --weights fp32 --json $w/bench-heuristic.json > $w/bench-heuristic.txt 2>&1
echo "heuristic bench at ${SECONDS}s"
NORMJIT_CACHE_DIR=$tuned timeout 330 $b/normjit tune --shapes $w/bf16.toml > $w/tune.txt 2>&1; echo "tune exit $? at ${SECONDS}s"
tail -3 $w/tune.txt
NORMJIT_CACHE_DIR=$tuned timeout 90 $b/normjit bench --graph --dtypes bf16 --weights fp32 --json $w/bench-tuned.json > $w/bench-tuned.txt 2>&1
NORMJIT_CACHE_DIR=$heur timeout 90 $b/normjit bench --graph --dtypes bf16 --weights fp32 --json $w/bench-heuristic2.json > $w/bench-heuristic2.txt 2>&1
echo "benches at ${SECONDS}s"
python3 bench/compare_bench.py $w/bench-heuristic.json $w/bench-tuned.json --changed | cut -c1-150
python3 bench/compare_bench.py $w/bench-heuristic2.json $w/bench-tuned.json --changed | cut -c1-150
tar -C $w -czf $o/results.tgz .
