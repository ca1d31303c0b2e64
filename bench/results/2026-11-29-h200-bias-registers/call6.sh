#!/usr/bin/env bash
# Session 43, call 6 (H200): build-device = the commit of this script, with a temporary hook:
# NORMJIT_HOOK_HOLD_BETA=1 makes the recompute-from-output backward's register rows read β and γ
# once a block into registers instead of every row (call 4's profile: 27% of stalls at the first
# use of a per-row fp32 load). tune --config of recompute candidates with and without it, LN bf16
# fp32 γ 4096 and RMS bf16 fp32 γ 4096 (M = 16384); the option-free rows for scale.
set -uo pipefail
B=build-device
export NORMJIT_CACHE_DIR=$(mktemp -d)
cfgs=("threads=256 threads_per_row=256 vec=4 registers"
      "threads=512 threads_per_row=512 vec=8 registers prefetch min_blocks=2"
      "threads=512 threads_per_row=512 vec=8 registers min_blocks=2"
      "threads=512 threads_per_row=512 vec=8 registers prefetch"
      "threads=512 threads_per_row=512 vec=8 registers"
      "threads=256 threads_per_row=256 vec=8 registers min_blocks=4 shared_sums"
      "threads=1024 threads_per_row=1024 vec=4 registers prefetch")
args=(); for c in "${cfgs[@]}"; do args+=(--config "$c"); done
for k in layernorm rmsnorm; do
  P="--kind $k --n 4096 --dtype bf16 --weight-dtype fp32 --m 16384"
  for h in none 0 1; do
    f=--recompute-from-output; [ $h = none ] && f=
    if [ $h = 1 ]; then export NORMJIT_HOOK_HOLD_BETA=1; else unset NORMJIT_HOOK_HOLD_BETA; fi
    timeout 60 $B/normjit tune $P $f "${args[@]}" > $OUT/tune-$k-$h.txt 2>&1
    echo "== $k recompute hook=$h exit $? at $SECONDS s"; grep -E "^\s+config" $OUT/tune-$k-$h.txt | sed -E 's/.*M<=[0-9]+ \| //'
  done
done
unset NORMJIT_HOOK_HOLD_BETA
tar czf $OUT/call6-logs.tgz -C $OUT $(cd $OUT && ls tune-*.txt) && rm -f $OUT/tune-*.txt
