#!/usr/bin/env bash
# Where two normjit binaries' heuristics choose different launch configs: the review of a rule
# change (no GPU: `tune --list` prints the heuristic's config first). Sweeps both kinds; bf16 with
# fp32 and bf16 γ, fp16 with fp16 and fp32 γ, fp32; rows as contiguous tensors align them (odd
# 16-bit N: 2 bytes, in phase); at M = 64 Mi / N and M = 200; on an H200 (memory rate 18.4) and
# an H100 (0). Prints each problem whose config differs, with both configs, then a count.
#
#   scripts/config-diff.sh OLD_BIN NEW_BIN [N ...]
#   default N: 1-4096 every 8 (and each +1), then to 65536 every 504 (and each +1), and 131072,
#   262144, 1048576.
set -uo pipefail
if [ $# -lt 2 ]; then
  sed -n '2,9p' "$0" >&2
  exit 2
fi
old=$1 new=$2
shift 2
if [ $# -gt 0 ]; then
  ns=("$@")
else
  ns=()
  for ((n = 8; n <= 4096; n += 8)); do ns+=($n $((n + 1))); done
  for ((n = 4600; n <= 65536; n += 504)); do ns+=($n $((n + 1))); done
  ns+=(131072 262144 1048576)
fi
first_config() {  # bin, then tune's problem flags: the heuristic's config on sm_90
  local bin=$1
  shift
  "$bin" tune --list "$@" 2>&1 | sed -n '/sm_90/{n;p;q}'
}
problems=0 differ=0
for n in "${ns[@]}"; do
  for kind in layernorm rmsnorm; do
    for dtypes in "bf16 fp32" "bf16 same" "fp16 same" "fp16 fp32" "fp32 same"; do
      read -r x w <<<"$dtypes"
      size=2; [ "$x" = fp32 ] && size=4
      bytes=$((n * size)); align=$((bytes & -bytes)); [ $align -gt 16 ] && align=16
      for m in $((67108864 / n > 0 ? 67108864 / n : 1)) 200; do
        for rate in 18.4 0; do
          args=(--kind $kind --n $n --dtype $x --weight-dtype $w --align $align --m $m --memory-rate $rate)
          a=$(first_config "$old" "${args[@]}")
          b=$(first_config "$new" "${args[@]}")
          problems=$((problems + 1))
          if [ "$a" != "$b" ]; then
            differ=$((differ + 1))
            echo "${args[*]}:$a  ->$b"
          fi
        done
      done
    done
  done
done
echo "config-diff: $differ of $problems problems differ"
