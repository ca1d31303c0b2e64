#!/usr/bin/env bash
# Session 26, call 8 (H100): the backward sweep (bench --graph, as 88074d2-final's) at the
# session's last kernel and rule change: clusters meet by posting, and the refitted cluster rules.
set -uo pipefail
export NORMJIT_CACHE_DIR=$(mktemp -d)
timeout 200 build-device/normjit bench --graph --json $OUT/bench.json > $OUT/bench.txt 2>&1; echo "bench: exit $?"
tail -3 $OUT/bench.txt
