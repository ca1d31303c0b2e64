#!/usr/bin/env bash
# Session 50, call 3 (H200). build-device at the gate's long-row rule with fp16 16-bit γ after
# the norm at 34816 kept (call 2's one loss); v/old = b1cadb2's normjit (the rule before).
# A/B old -> new, bench --graph, two rounds: fp16 fp32 γ both orders at 32769-131072, bf16 with
# bf16 γ at five N, fp16 16-bit γ at 34816-36864.
set -uo pipefail
B=build-device
mkdir -p $OUT/ab
N1=34816,36864,40960,45056,49152,53248,57344
N2=90112,98304,106496,114688,122880,131072
scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab \
  fp16fa "--graph --kinds rmsnorm --dtypes fp16 --weights fp32 --n $N1 --fused gate,gate-before" \
  fp16fb "--graph --kinds rmsnorm --dtypes fp16 --weights fp32 --n $N2 --fused gate,gate-before" \
  bf16s "--graph --kinds rmsnorm --dtypes bf16 --weights same --n 36864,53248,106496,122880,131072 --fused gate,gate-before" \
  fp16s "--graph --kinds rmsnorm --dtypes fp16 --weights same --n 34816,36864 --fused gate" > $OUT/ab.txt 2>&1
echo "ab exit $? at $SECONDS s"; grep -E "^(layer|rms)|median" $OUT/ab.txt | grep -v " none " | sed -E 's/threads_per_row=[0-9]+ //; s/vec=8 //; s/registers //' | cut -c1-150
tar czf $OUT/call3-logs.tgz -C $OUT ab ab.txt 2>/dev/null; rm -rf $OUT/ab
