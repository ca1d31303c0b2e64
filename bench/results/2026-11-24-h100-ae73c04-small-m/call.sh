#!/usr/bin/env bash
# Session 12, call 4 (ae73c04): issue 4's "tuned within 2% of exhaustive" at the sweep's few-row
# shapes (bench/tune-small-m.toml: M = 1, 37, 199 at N = 4096 and 8192, every kind and dtype),
# tuned and exhaustively in one run, the finalists and the two picks timed in turns (call 3 timed them one after another); then the forward's
# search space exhaustively over bench/tune-forward.toml with every candidate's time kept (the
# progress lines), the data a prune of the forward's space needs.
set -uo pipefail
b=build-device; o=$OUT
scripts/gpu-environment.sh $b > $o/environment.txt 2>&1
export NORMJIT_CACHE_DIR=$(mktemp -d)
timeout 330 $b/normjit tune --exhaustive --shapes bench/tune-small-m.toml > $o/tune-small-m.txt 2>&1
echo "exit $?" >> $o/tune-small-m.txt
export NORMJIT_CACHE_DIR=$(mktemp -d)
timeout 240 $b/normjit tune --forward --exhaustive --shapes bench/tune-forward.toml > $o/tune-forward.txt 2>&1
echo "exit $?" >> $o/tune-forward.txt
grep -vE "^\[|^  fit" $o/tune-small-m.txt | awk 'NF>12' | awk '{print $(NF-12), $(NF-9), $(NF-8), $(NF-7)}' | sort | uniq -c | sort -rn | head -5
tail -n 1 $o/tune-small-m.txt; tail -n 1 $o/tune-forward.txt
