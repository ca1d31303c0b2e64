#!/usr/bin/env bash
# Session 54, call 3 (H200). build-device at the V rule's commit (fp16 LayerNorm's element blocks
# of 128 and 160).
# 1. GPU tests of the V rule: BackwardFewGroups at 1901 and 2553 (fp16's blocks of 128 and 160),
#    BackwardPhasedRows.
# 2. `tune --align 2 --config` beside the heuristic at 4095 and 5003 (M = 64 Mi / N, bf16 fp32 γ
#    and fp16): phased blocks that keep dγ/dβ in registers (their groups take rows of one phase,
#    so a slot's columns hold), two an SM at 96 registers or one unbounded; blocks of a slot a
#    thread (544, 640 threads) in registers or with shared sums two an SM; RMSNorm 4095's rows of
#    an element against its phased block.
set -uo pipefail
B=build-device
scripts/gpu-environment.sh $B > $OUT/environment.txt 2>&1
GPU_TEST_SHARDS=4 GPU_TEST_FILTER='EveryN/BackwardFewGroups.*/N1901:EveryN/BackwardFewGroups.*/N2553:*BackwardPhasedRows*' \
  BUILD_DIR=$B OUT=$OUT timeout 200 scripts/gpu-run.sh gpu-tests > $OUT/tests-run.txt 2>&1
echo "tests exit $? at $SECONDS s"; grep -hE '^\[  (PASSED|FAILED|SKIPPED) |OK \]|Failure' $OUT/gpu-tests*.txt | sort | uniq -c | head -20
V="vec=8 registers"
run() {  # $1 label, $2 kind, $3 n, rest: configs
  local label=$1 k=$2 n=$3; shift 3
  local dt=(--dtype bf16 --weight-dtype fp32); [ $label = fp16 ] && dt=(--dtype fp16)
  local args=(); for c in "$@"; do local t=${c%% *}; args+=(--config "threads=$t threads_per_row=$t ${c#* }"); done
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 60 $B/normjit tune --align 2 --kind $k --n $n --m $((67108864 / n)) "${dt[@]}" "${args[@]}" 2>>$OUT/tune.err |
    grep -E "^(  config )?(rms|layer)norm" | sed -E "s/^/$label /; s/x=[a-z0-9]+ dy=[a-z0-9]+ dx=[a-z0-9]+ weight=[a-z0-9]+ //; s/threads_per_row=[0-9]+ //; s/ \+weight( \+bias)?//"
}
{
for d in bf16 fp16; do
  for k in layernorm rmsnorm; do
    run $d $k 4095 "288 $V min_blocks=2 shared_weights phased" "288 $V shared_weights phased" \
      "544 $V min_blocks=2 shared_weights phased" "544 $V prefetch shared_weights phased" \
      "544 $V min_blocks=2 shared_sums shared_weights phased" "544 $V prefetch min_blocks=2 shared_sums shared_weights phased" \
      "288 $V min_blocks=3 shared_sums shared_weights phased" "256 vec=1 registers"
    run $d $k 5003 "320 $V min_blocks=2 shared_weights phased" "320 $V shared_weights phased" \
      "640 $V shared_weights phased" "640 $V shared_sums shared_weights phased" "320 $V min_blocks=3 shared_sums shared_weights phased"
  done
done
} > $OUT/tune.txt
echo "tune exit $? at $SECONDS s"; cut -c1-200 $OUT/tune.txt
tar czf $OUT/call3-logs.tgz -C $OUT tune.err gpu-tests*.txt tests-run.txt 2>/dev/null
