#!/usr/bin/env bash
# Session 12, call 2 (ba9b95b): issue 4's tuning time after this session's prune (bench/NOTES.md
# entry 25) and the final repetitions scaled to short backwards. Every shape of
# bench/tune-sweep.toml tuned cold (no --exhaustive), as session 11's call 10 (-003147c-tune-time/).
set -uo pipefail
b=build-device; o=$OUT
scripts/gpu-environment.sh $b > $o/environment.txt 2>&1
export NORMJIT_CACHE_DIR=$(mktemp -d)
timeout 580 $b/normjit tune --shapes bench/tune-sweep.toml > $o/tune-sweep.txt 2>&1
echo "exit $?" >> $o/tune-sweep.txt
grep -E "^(layer|rms)" $o/tune-sweep.txt | wc -l; tail -n 2 $o/tune-sweep.txt | cut -c1-200
