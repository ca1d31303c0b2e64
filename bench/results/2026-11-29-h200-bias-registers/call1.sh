#!/usr/bin/env bash
# Session 43, call 1 (H200): build-device = the commit of this script, with two temporary hooks.
# - NORMJIT_HOOK_BIAS_REGISTERS=1: the backward's blocks of shared sums keep dβ's sums in
#   registers (dγ's stay in shared memory). Times LayerNorm bf16 (fp32 γ) candidates of one or two
#   slots a thread with and without it (tune --config, bwd-configs.txt: N, M, alignment, config).
# - NORMJIT_HOOK_FWD=four-nopf|two640: LayerNorm's phased forward rule with four slots a thread
#   and no prefetch, or two-slot prefetching blocks up to 640 threads; bench --forward --graph
#   of each mode against the rule, twice in turns.
set -uo pipefail
B=build-device/normjit
D=bench/results/2026-11-29-h200-bias-registers
P="--kind layernorm --dtype bf16 --weight-dtype fp32"
export NORMJIT_CACHE_DIR=$(mktemp -d)
for n in $(cut -d' ' -f1 $D/bwd-configs.txt | uniq); do
  read -r _ m a _ < <(grep "^$n " $D/bwd-configs.txt | head -1)
  args=()
  while read -r _ _ _ cfg; do args+=(--config "$cfg"); done < <(grep "^$n " $D/bwd-configs.txt)
  for h in 0 1; do
    if [ $h = 1 ]; then export NORMJIT_HOOK_BIAS_REGISTERS=1; else unset NORMJIT_HOOK_BIAS_REGISTERS; fi
    timeout 60 $B tune $P --n $n --align $a --m $m "${args[@]}" > $OUT/bwd-$n-h$h.txt 2>&1
    echo "== bwd $n hook=$h exit $? at $SECONDS s"; grep -vE "^\s*$" $OUT/bwd-$n-h$h.txt | tail -8
  done
done
unset NORMJIT_HOOK_BIAS_REGISTERS
FW="--forward --graph --kinds layernorm --dtypes bf16 --weights fp32 --n 7001,8191,9001,10001,11001,12289"
for r in 1 2; do
  for mode in base four-nopf two640; do
    NORMJIT_HOOK_FWD=$([ $mode = base ] || echo $mode) NORMJIT_CACHE_DIR=$(mktemp -d) timeout 90 $B bench $FW --json $OUT/fwd-$mode$r.json > $OUT/fwd-$mode$r.txt 2>&1
    echo "fwd $mode run $r exit $? at $SECONDS s"
  done
done
for mode in four-nopf two640; do for r in 1 2; do
  echo "== $mode run $r against the rule"; python3 bench/compare_bench.py $OUT/fwd-base$r.json $OUT/fwd-$mode$r.json 2>&1 | tail -9
done; done
