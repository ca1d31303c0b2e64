#!/usr/bin/env bash
# Session 21, call 5 (15a9ef7): exhaustive tuning of the forward at odd N below the realigned
# rule's 32769, now that the search space lists the aligned width first and then the realigned
# 16- and 8-byte slots (call 2's forward list was filled by the realigned ones alone).
set -uo pipefail
b=build-device; o=$OUT; w=$(mktemp -d)
shape() { printf '[[problem]]\nkind = "%s"\nn = %d\ndtype = "%s"\nweight_dtype = "fp32"\nalign = [2]\nm = [%d]\n\n' $1 $2 $3 $((67108864/$2)); }
{ for k in layernorm rmsnorm; do for n in 1001 4095 5003 8191 12289 16385 24577; do shape $k $n bf16; done; done; } > $w/odd.toml
t=$(mktemp -d)
NORMJIT_CACHE_DIR=$t timeout 200 $b/normjit tune --forward --exhaustive --shapes $w/odd.toml > $w/tune-forward.txt 2>$w/tune-err.txt; echo "forward tune exit $? at ${SECONDS}s"
grep -v "^  fit" $w/tune-forward.txt | cut -c1-330
for n in 1001 4095 5003 8191 12289 16385 24577; do for k in layernorm rmsnorm; do
  echo "== $k $n: best scalar / best realigned"
  grep "fit $k forward N=$n " $w/tune-forward.txt | grep " vec=1 " | sort -t'|' -k3 -g | head -1 | cut -d'|' -f2-
  grep "fit $k forward N=$n " $w/tune-forward.txt | grep -v " vec=1 " | sort -t'|' -k3 -g | head -2 | cut -d'|' -f2-
done; done
tar -C $w -czf $o/results.tgz odd.toml tune-forward.txt tune-err.txt
