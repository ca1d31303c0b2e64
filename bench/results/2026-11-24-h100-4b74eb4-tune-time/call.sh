#!/usr/bin/env bash
# Call K of session 9: where a shape's tuning time goes (compile on host threads vs load and
# time on the GPU), cold cache, three shapes; then the same again with the cubins on disk.
set -uo pipefail
b=build-device; o=$OUT
export NORMJIT_CACHE_DIR=$(mktemp -d)
nproc
for pass in cold warm; do
  for args in "--kind layernorm --n 8192 --dtype bf16 --weight-dtype fp32 --m 8192" "--kind rmsnorm --n 4096 --dtype bf16 --weight-dtype fp32 --m 16384" "--kind layernorm --n 32768 --dtype fp32 --m 2048"; do
    timeout 40 $b/normjit tune $args 2>/dev/null | grep -E "^(layer|rms)" | cut -c1-180 | sed "s/^/$pass /"
  done
done | tee $o/tune-time.txt
