#!/usr/bin/env bash
# Session 42, call 3 (H200): build-device = the commit of this script. LayerNorm's phased rows whose
# γ and β one block cannot hold (fp32, N ≈ 28600-32767): the rule's prefetching cluster of two at two
# slots a thread (4 bytes spilled at 928-992 threads) against three slots a thread, no prefetch,
# clusters of four and rows of an element a thread (tune --config, bench's M); A/B against 8c3cc25;
# then the forward GPU tests (a pinned prefetching LayerNorm cluster added).
set -uo pipefail
B=build-device
cfg() { echo "threads=$1 threads_per_row=$1 vec=8 registers $2 shared_weights phased"; }
for spec in "29001 928 608 480" "30001 960 640 480" "32001 1024 672 512"; do
  set -- $spec; n=$1
  for w in fp32 same; do
    [ $w = same ] && [ $n != 30001 ] && continue
    NORMJIT_CACHE_DIR=$(mktemp -d) timeout 40 $B/normjit tune --forward --kind layernorm --n $n --dtype bf16 --weight-dtype $w --align 2 --m $((67108864 / n)) \
      --config "$(cfg $3 'cluster=2 prefetch')" --config "$(cfg $2 'cluster=2')" --config "$(cfg $4 'cluster=4 prefetch min_blocks=2')" \
      --config "$(cfg $4 'cluster=4 prefetch')" --config "threads=1024 threads_per_row=1024 vec=1 registers" 2>&1 | grep -E " time [0-9]+/|M<=[0-9]+ +[0-9]" | sed 's/.*weight=\([a-z0-9]*\).*time/\1 '$n' time/' >> $OUT/tune.txt
  done
done
echo "tune at $SECONDS s"; cut -c1-160 $OUT/tune.txt
timeout 150 scripts/bench-ab.sh $B/v/old $B/normjit $OUT \
  fp32 "--forward --graph --kinds layernorm --dtypes bf16 --weights fp32 --n 29001,30001,32001" \
  same "--forward --graph --kinds layernorm --dtypes bf16,fp16 --weights same --n 30001" > $OUT/ab.txt 2>&1
echo "ab at $SECONDS s"; cut -c1-150 $OUT/ab.txt
tar czf $OUT/ab-logs.tgz -C $OUT $(cd $OUT && ls *-old*.* *-new*.*) && (cd $OUT && rm -f *-old*.* *-new*.*)
GPU_TEST_SHARDS=16 GPU_TEST_FILTER='Forward*' BUILD_DIR=$B OUT=$OUT timeout 200 scripts/gpu-run.sh gpu-tests > $OUT/gpu-run.txt 2>&1
echo "forward tests exit $? at $SECONDS s"
grep -hE "^\[  (PASSED|FAILED) " $OUT/gpu-tests.txt | sort | uniq -c; grep -E "^\[  FAILED  \]|Failure" $OUT/gpu-tests.txt | head
tar czf $OUT/test-logs.tgz -C $OUT gpu-run.txt gpu-tests.txt environment.txt 2>/dev/null; rm -f $OUT/gpu-run.txt $OUT/gpu-tests.txt
