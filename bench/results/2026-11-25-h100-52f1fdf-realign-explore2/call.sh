#!/usr/bin/env bash
# Session 21, call 2 (working tree on 52f1fdf): realigned slots with the row's loads issued
# before any select (call 1's kernels selected right after each load and ran up to 2x slower):
# exhaustive tuning of odd N, backward and forward; A/B bench against 52f1fdf.
set -uo pipefail
b=build-device; o=$OUT; w=$(mktemp -d)
shape() { printf '[[problem]]\nkind = "%s"\nn = %d\ndtype = "%s"\nweight_dtype = "fp32"\nalign = [2]\nm = [%d]\n\n' $1 $2 $3 $((67108864/$2)); }
NS="1001 2049 4095 5003 8191 12289"
{ for k in layernorm rmsnorm; do for n in $NS; do shape $k $n bf16; done; done; } > $w/odd.toml
t=$(mktemp -d)
NORMJIT_CACHE_DIR=$t timeout 200 $b/normjit tune --exhaustive --shapes $w/odd.toml > $w/tune.txt 2>$w/tune-err.txt; echo "tune exit $? at ${SECONDS}s"
NORMJIT_CACHE_DIR=$t timeout 120 $b/normjit tune --forward --exhaustive --shapes $w/odd.toml > $w/tune-forward.txt 2>>$w/tune-err.txt; echo "forward tune exit $? at ${SECONDS}s"
grep -v "^  fit" $w/tune.txt $w/tune-forward.txt | cut -c1-300
scripts/bench-ab.sh $b/v/old $b/normjit $w \
  bwd "--graph --weights fp32 --dtypes bf16 --n 1001,1002,2049,4095,5003,8191,12289,32769" \
  fwd "--forward --graph --weights fp32 --dtypes bf16 --n 1001,1002,2049,4095,5003,8191,12289,32769" > $o/ab.txt 2>&1
echo "ab done at ${SECONDS}s"
cat $o/ab.txt
tar -C $w -czf $o/results.tgz .
