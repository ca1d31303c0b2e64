#!/usr/bin/env bash
# Session 10, calls 7 and 8: issue 4's whole-sweep comparison. Every shape of
# bench/tune-sweep.toml (the speed issue's sweep, both kinds, bf16/fp16 with fp32 and same
# weights, fp32, plus the small-M rows), tuned cold with --exhaustive: heuristic, tuned and
# exhaustive-best times (graph replays, L2 flushed) and the tuning time per shape.
#   usage: call.sh 1|2   (the half of the sweep)
set -uo pipefail
b=build-device; o=$OUT; k=$1
d=$(dirname "$0")
scripts/gpu-environment.sh $b > $o/environment-$k.txt 2>&1
export NORMJIT_CACHE_DIR=$(mktemp -d)
timeout 570 $b/normjit tune --shapes $d/shapes-$k.toml --exhaustive > $o/tune-sweep-$k.txt 2>&1
echo "exit $?" >> $o/tune-sweep-$k.txt
tail -n 3 $o/tune-sweep-$k.txt | cut -c1-200
