#!/usr/bin/env bash
# Session 11, call 10 (003147c): issue 4's tuning time after the search space also lost shared sums at 32 elements a thread (and, since call 2, staged rows at 4 slots
# a thread and prefetch for scalar 16-bit rows of 32 elements a thread), with the single-row and fp32 odd-row rules in. Every shape of
# bench/tune-sweep.toml tuned cold (no --exhaustive: one call), with the heuristic/tuned ratio
# and the wall, compile and timing seconds per shape.
set -uo pipefail
b=build-device; o=$OUT
scripts/gpu-environment.sh $b > $o/environment.txt 2>&1
export NORMJIT_CACHE_DIR=$(mktemp -d)
timeout 580 $b/normjit tune --shapes bench/tune-sweep.toml > $o/tune-sweep.txt 2>&1
echo "exit $?" >> $o/tune-sweep.txt
grep -E "^(layer|rms)" $o/tune-sweep.txt | wc -l; tail -n 2 $o/tune-sweep.txt | cut -c1-200
