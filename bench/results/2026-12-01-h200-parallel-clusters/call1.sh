#!/usr/bin/env bash
# Session 60, call 1 (H200). build-device: 8457dc1. Exhaustive tuning, three questions:
#  A. parallel norms at 16385-32767 (issue 5): the rule gives one block an SM in clusters of 4;
#     session 59's call 5 found LN bf16 fp32 γ 24576 1.22x faster in clusters of four blocks of
#     two slots, two an SM. The search space and, beside it (--config), that shape at each N.
#  B. issue 3's borderline shapes (89-90% of copy in session 59's standing): LN 14336, LN fp16 7168,
#     RMS 1000, RMS 65536 (88%).
#  C. register sums (no shared-memory sums) at LN bf16 32768 in blocks of 1024 threads.
set -uo pipefail
B=build-device
mkdir -p $OUT/logs
tune() {  # name, then normjit tune's arguments
  local name=$1; shift
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 100 $B/normjit tune "$@" > $OUT/logs/$name.txt 2>&1
  echo "$name exit $? at $SECONDS s"
}
pair() { echo "threads=$1 threads_per_row=$1 vec=8 registers cluster=$2 min_blocks=2 shared_sums$3"; }
while read -r k d w n m; do
  t=$((n / 64))
  [ $n != 24576 ] && tune ex-$k-$d-$w-$n --exhaustive --kind $k --dtype $d --weight-dtype $w --n $n --m $m --parallel
  tune cfg-$k-$d-$w-$n --kind $k --dtype $d --weight-dtype $w --n $n --m $m --parallel \
    --config "$(pair $t 4 '')" --config "$(pair $t 4 ' shared_weights')" --config "$(pair $t 8 '')"
done <<'SHAPES'
layernorm bf16 fp32 20480 3276
layernorm bf16 fp32 24576 2730
layernorm bf16 fp32 28672 2340
layernorm fp16 same 20480 3276
layernorm fp16 same 28672 2340
layernorm bf16 same 24576 2730
rmsnorm bf16 fp32 20480 3276
rmsnorm bf16 fp32 24576 2730
rmsnorm bf16 fp32 28672 2340
rmsnorm fp16 same 24576 2730
layernorm bf16 fp32 18432 3640
layernorm bf16 fp32 30720 2184
SHAPES
while read -r k d w n m; do
  tune ex-$k-$d-$w-$n --exhaustive --kind $k --dtype $d --weight-dtype $w --n $n --m $m
done <<'SHAPES'
layernorm bf16 fp32 14336 4681
layernorm fp16 fp32 7168 9362
rmsnorm bf16 fp32 65536 1024
rmsnorm bf16 fp32 1000 67108
SHAPES
tune reg-layernorm-32768 --kind layernorm --dtype bf16 --weight-dtype fp32 --n 32768 --m 2048 \
  --config "threads=1024 threads_per_row=1024 vec=8 registers cluster=4" \
  --config "threads=512 threads_per_row=512 vec=8 registers cluster=8 min_blocks=2" \
  --config "threads=1024 threads_per_row=1024 vec=8 registers cluster=4 shared_sums shared_weights"
echo "== summary"
grep -h "exhaustive best" $OUT/logs/ex-*.txt | sed 's/  */ /g; s/threads_per_row=[0-9]* //g' | cut -c1-360
for f in $OUT/logs/cfg-*.txt $OUT/logs/reg-*.txt; do echo "-- $(basename $f)"; grep -E "^ *config " $f | sed 's/  */ /g; s/x=.*M<=/M<=/; s/threads_per_row=[0-9]* //' | cut -c1-260; done
tar czf $OUT/call1.tgz -C $OUT logs && rm -rf $OUT/logs
