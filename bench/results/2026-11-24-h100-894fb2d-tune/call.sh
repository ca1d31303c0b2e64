#!/usr/bin/env bash
# Session 12, call 5 (894fb2d): issue 4's evidence after this session's tuner changes (bench/NOTES.md
# entry 25): every shape of bench/tune-sweep.toml tuned cold (wall, compile and timing per
# shape; heuristic/tuned), then the sweep's few-row shapes (bench/tune-small-m.toml) tuned and
# exhaustively in one run, differing picks re-timed side by side in turns.
set -uo pipefail
b=build-device; o=$OUT
scripts/gpu-environment.sh $b > $o/environment.txt 2>&1
export NORMJIT_CACHE_DIR=$(mktemp -d)
timeout 400 $b/normjit tune --shapes bench/tune-sweep.toml > $o/tune-sweep.txt 2>&1
echo "exit $?" >> $o/tune-sweep.txt
export NORMJIT_CACHE_DIR=$(mktemp -d)
timeout 180 $b/normjit tune --exhaustive --shapes bench/tune-small-m.toml > $o/tune-small-m.txt 2>&1
echo "exit $?" >> $o/tune-small-m.txt
grep -E "^(layer|rms)" $o/tune-sweep.txt | wc -l; tail -n 1 $o/tune-sweep.txt; tail -n 1 $o/tune-small-m.txt
