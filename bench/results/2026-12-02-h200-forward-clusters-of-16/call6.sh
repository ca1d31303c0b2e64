#!/usr/bin/env bash
# Session 63, call 6 (H200). build-device: ad573d8. No timing: the SASS of the forward's
# LayerNorm 1000 (the rule's bounded warp rows) in fp16 and bf16, fp32 γ, for entry 77's next 4
# (fp16 76% against bf16 87% at the same registers). Needs nvdisasm on the device.
set -uo pipefail
B=build-device
mkdir -p $OUT/logs
export NORMJIT_NVDISASM=${NORMJIT_NVDISASM:-$(command -v nvdisasm || ls /usr/local/cuda*/bin/nvdisasm 2>/dev/null | head -1)}
echo "nvdisasm: $NORMJIT_NVDISASM"
for d in bf16 fp16; do
  $B/normjit emit --forward --kind layernorm --dtype $d --weight-dtype fp32 --n 1000 \
    --config "threads=256 threads_per_row=32 vec=8 registers min_blocks=4" --sass > $OUT/logs/sass-$d.txt 2>&1
  echo "$d: $(grep -cE '^ +/\*[0-9a-f]{4}\*/' $OUT/logs/sass-$d.txt) instructions"
  grep -oE '^ +/\*[0-9a-f]{4}\*/ +(@!?P[0-9T] +)?[A-Z0-9_]+(\.[A-Z0-9_]+)*' $OUT/logs/sass-$d.txt | awk '{print $NF}' | sort | uniq -c | sort -rn | head -24 | tr '\n' ';'; echo
done
tar czf $OUT/call6.tgz -C $OUT logs && rm -rf $OUT/logs
