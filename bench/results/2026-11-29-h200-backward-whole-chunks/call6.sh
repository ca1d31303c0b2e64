#!/usr/bin/env bash
# Session 41, call 6 (H200): build-device = the commit of this script. The whole GPU suite
# after the session's kernel changes (the forward's and the backward's prefetching phased
# blocks; the rules' other kernels are PTX-identical to 53e0333's), and the backward's
# prefetching phased candidates timed by 53e0333's binary and this one, alternately (tune
# --config, M = 16384, bf16 fp32 γ): what complete_phased_row did for them.
set -uo pipefail
B=build-device
GPU_TEST_SHARDS=16 BUILD_DIR=$B OUT=$OUT timeout 420 scripts/gpu-run.sh gpu-tests > $OUT/gpu-run.txt 2>&1
echo "gpu tests exit $? at $SECONDS s"
grep -hE "^\[  (PASSED|FAILED) " $OUT/gpu-tests.txt | sort | uniq -c; grep -E "^\[  FAILED  \]|Failure" $OUT/gpu-tests.txt | head
tar czf $OUT/logs.tgz -C $OUT gpu-run.txt gpu-tests.txt environment.txt && rm -f $OUT/gpu-run.txt $OUT/gpu-tests.txt
export NORMJIT_CACHE_DIR=$(mktemp -d)
for r in 1 2; do for bin in old new; do
  exe=$B/normjit; [ $bin = old ] && exe=$B/v/old
  for s in "rmsnorm 5003 640" "rmsnorm 6001 768" "rmsnorm 8191 544" "layernorm 5003 640" "layernorm 8191 544"; do
    set -- $s
    [ $SECONDS -lt 560 ] && timeout 20 $exe tune --kind $1 --n $2 --dtype bf16 --weight-dtype fp32 --align 2 --m 16384 \
      --config "threads=$3 threads_per_row=$3 vec=8 registers prefetch shared_sums shared_weights phased" 2>&1 |
      grep -E " time 2/" | sed -E "s/^.*\] (layernorm|rmsnorm) N=([0-9]+).* time 2\/2 /$bin$r \1 \2 /; s/threads_per_row=[0-9]+ //"
  done
done; done | tee $OUT/prefetch-ab.txt
echo "done at $SECONDS s"
