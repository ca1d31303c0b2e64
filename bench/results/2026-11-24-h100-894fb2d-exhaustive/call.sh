#!/usr/bin/env bash
# Session 12, call 6 (894fb2d): the whole sweep (bench/tune-sweep.toml, 250 shapes) tuned and
# exhaustively in one run, cold: heuristic vs tuned vs exhaustive per shape, differing picks
# re-timed side by side in turns (issue 4's evidence in one run). The `fit` lines (every
# candidate's time) are kept in the log.
set -uo pipefail
b=build-device; o=$OUT
scripts/gpu-environment.sh $b > $o/environment.txt 2>&1
export NORMJIT_CACHE_DIR=$(mktemp -d)
timeout 570 $b/normjit tune --exhaustive --shapes bench/tune-sweep.toml 2>/dev/null > $o/tune-sweep-exhaustive.txt
echo "exit $?" >> $o/tune-sweep-exhaustive.txt
grep -E "^(layer|rms)" $o/tune-sweep-exhaustive.txt | wc -l; tail -n 1 $o/tune-sweep-exhaustive.txt
