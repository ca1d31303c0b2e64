#!/usr/bin/env bash
# Session 19, call 5: fused problems at model widths beyond 4096 (backward and forward, bf16,
# fp32 γ, M·N = 64 Mi), looking for more cliffs like calls 1-4's; and exhaustive tuning of the
# forward's LayerNorm with all four elementwise options where it ran at 0.82-0.88 (call 1).
set -uo pipefail
b=build-device; o=$OUT
N=5120,6144,7168,10240,12288,14336,16384,20480
NORMJIT_CACHE_DIR=$(mktemp -d) timeout 200 $b/normjit bench --graph --dtypes bf16 --weights fp32 --n $N \
  --fused residual,all,gate,gate-before,parallel,recompute --json $o/bwd-scan.json > $o/bwd-scan.txt 2>&1
echo "backward scan exit $?"
NORMJIT_CACHE_DIR=$(mktemp -d) timeout 150 $b/normjit bench --forward --graph --dtypes bf16 --weights fp32 --n $N \
  --fused residual,all,gate,parallel --json $o/fwd-scan.json > $o/fwd-scan.txt 2>&1
echo "forward scan exit $?"
export NORMJIT_CACHE_DIR=$(mktemp -d)
for n in 1280 2560 5120; do
  timeout 120 $b/normjit tune --forward --kind layernorm --n $n --dtype bf16 --weight-dtype fp32 --residual --rowscale \
    --dropout bits --zero-centered-weight --m $(( 67108864 / n )) --exhaustive > $o/t.txt 2>&1
  echo "forward tune $n exit $?"
  cat $o/t.txt >> $o/tune-fwd-all.txt; grep -E "^(layernorm|rmsnorm) N=" $o/t.txt >> $o/tune-fwd-summary.txt
done
rm -f $o/t.txt; gzip -f $o/tune-fwd-all.txt
cd $o && tar czf results.tgz *.json && rm -f *.json
