#!/usr/bin/env bash
# Session 45, call 1 (H200). build-device = 6f6f777 (A): the dγ/dβ reduction launched as a
# programmatic dependent of the backward, waiting at its top; no L2 discards for N % 32 != 0.
# v/B = A plus griddepcontrol.launch_dependents at the top of the row families' backward (the
# reduction's blocks placed at once). v/old = 3511164 (session 44's end).
# 1. A/B old -> A and old -> B: long rows, and few rows (plain launches and graph replays).
# 2. Exhaustive tuning at LN bf16 (fp32 γ) 14336, 16384, 32768 now that partial rows are cheap.
set -uo pipefail
B=build-device
for v in A B; do
  new=$B/normjit; [ $v = B ] && new=$B/v/B
  mkdir -p $OUT/ab-$v
  scripts/bench-ab.sh $B/v/old $new $OUT/ab-$v \
    long "--graph --dtypes bf16 --weights fp32 --n 1024,4096,5003,8192,16384,32768,65536,262144" \
    few "--graph --dtypes bf16 --weights fp32 --n 1024,4096,8192,16384 --m 1,37,199,1024" > $OUT/ab-$v.txt 2>&1
  echo "ab $v exit $? at $SECONDS s"
done
for n in 14336 16384 32768; do
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 100 $B/normjit tune --kind layernorm --n $n --dtype bf16 --weight-dtype fp32 \
    --m $((67108864 / n)) --exhaustive > $OUT/tune-$n.txt 2>&1
  echo "tune $n exit $? at $SECONDS s"
done
tar czf $OUT/call1-logs.tgz -C $OUT ab-A ab-B 2>/dev/null; rm -rf $OUT/ab-A $OUT/ab-B
