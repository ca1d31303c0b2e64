#!/usr/bin/env bash
# Session 60, call 2 (H200). build-device: as call 1. Call 1's register-sum probe at LN bf16 32768
# read one 1024-thread block an SM 177 µs against two of 512 at 132, in clusters of 4 with the same
# shared sums and γ: independent blocks overlap one another's reductions and barriers. Do four
# blocks of 256 an SM (two slots a thread, the cluster twice as wide) overlap more? --config
# beside the heuristic, option-free and parallel rows, bf16 with fp32 γ.
set -uo pipefail
B=build-device
mkdir -p $OUT/logs
tune() {  # name, then normjit tune's arguments
  local name=$1; shift
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 100 $B/normjit tune "$@" > $OUT/logs/$name.txt 2>&1
  echo "$name exit $? at $SECONDS s"
}
cfg() { echo "threads=$1 threads_per_row=$1 vec=8 registers cluster=$2 min_blocks=$3 shared_sums$4"; }
while read -r k n m par; do
  t=$((n / 128))
  tune q-$k-$n$par --kind $k --dtype bf16 --weight-dtype fp32 --n $n --m $m $par \
    --config "$(cfg $t 8 4 ' shared_weights')" --config "$(cfg $t 8 4 '')" --config "$(cfg $t 8 3 ' shared_weights')" \
    --config "$(cfg $((n / 64)) 4 2 ' shared_weights')" --config "$(cfg $((2 * t)) 8 2 ' shared_weights')"
done <<'SHAPES'
layernorm 32768 2048
rmsnorm 32768 2048
layernorm 16384 4096
rmsnorm 16384 4096
layernorm 24576 2730
layernorm 14336 4681
layernorm 24576 2730 --parallel
rmsnorm 24576 2730 --parallel
layernorm 32768 2048 --parallel
SHAPES
for k in layernorm rmsnorm; do
  tune q-$k-65536 --kind $k --dtype bf16 --weight-dtype fp32 --n 65536 --m 1024 \
    --config "$(cfg 256 16 4 ' shared_weights')" --config "$(cfg 512 16 2 ' shared_weights')" --config "$(cfg 256 16 3 ' shared_weights')"
  tune q-$k-131072 --kind $k --dtype bf16 --weight-dtype fp32 --n 131072 --m 512 \
    --config "$(cfg 512 16 2 ' shared_weights')" --config "$(cfg 1024 16 1 ' shared_weights')"
done
echo "== summary"
for f in $OUT/logs/q-*.txt; do echo "-- $(basename $f)"; grep -E "^ *config |does not fit" $f | sed 's/  */ /g; s/x=.*M<=/M<=/; s/threads_per_row=[0-9]* //' | cut -c1-260; done
tar czf $OUT/call2.tgz -C $OUT logs && rm -rf $OUT/logs
