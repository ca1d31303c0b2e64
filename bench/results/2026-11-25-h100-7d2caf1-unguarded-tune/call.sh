#!/usr/bin/env bash
# Session 22, call 6 (working tree on the commit named plus an experiment hook, not committed:
# NJ_EXP_UNGUARDED=1 makes every backward config of 16-bit rows held as read, an element a slot,
# load without branches): exhaustive tuning of odd bf16 N with (v/exp) and without the hook —
# do unguarded rows of an element beat the staged or guarded picks anywhere outside 161-255
# threads (LN 5003: staged, 75-78% of copy)?
set -uo pipefail
b=build-device; o=$OUT; w=$(mktemp -d)
shape() { printf '[[problem]]\nkind = "%s"\nn = %d\ndtype = "%s"\nweight_dtype = "fp32"\nalign = [2]\nm = [%d]\n\n' $1 $2 $3 $((67108864/$2)); }
{ for k in layernorm rmsnorm; do for n in 1001 4095 5003 8191; do shape $k $n bf16; done; done; } > $w/odd.toml
NORMJIT_CACHE_DIR=$(mktemp -d) timeout 250 $b/normjit tune --exhaustive --shapes $w/odd.toml > $o/tune-guarded.txt 2>&1; echo "guarded exit $? at ${SECONDS}s"
NORMJIT_CACHE_DIR=$(mktemp -d) timeout 250 $b/v/exp tune --exhaustive --shapes $w/odd.toml > $o/tune-unguarded.txt 2>&1; echo "unguarded exit $? at ${SECONDS}s"
cp $w/odd.toml $o/
grep -v "^fit" $o/tune-guarded.txt | head -80
