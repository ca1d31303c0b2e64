#!/usr/bin/env bash
# Session 40, call 6 (H200): build-device = the commit of this script. Why phased LayerNorm
# forwards reach ~60% of copy where RMSNorm's reach 75-88% (call 4): Nsight Compute of the
# phased rule's LN bf16 5003 kernel (320 threads, γ and β held) beside the aligned LN 5120's
# (its memory-rich rule: 320 threads, prefetch, held), and the phased RMS 5003's.
set -uo pipefail
B=build-device
for s in "ln-5003-phased layernorm 5003 --align 2 --m 13413" "ln-5120-aligned layernorm 5120 --m 13107" \
         "rms-5003-phased rmsnorm 5003 --align 2 --m 13413"; do
  set -- $s; name=$1 kind=$2 n=$3; shift 3
  timeout 170 scripts/ncu-profile.sh $OUT $name --kernel nj_norm_forward -- $B/normjit tune --forward --kind $kind \
    --dtype bf16 --weight-dtype fp32 --n $n "$@" > $OUT/$name-headline.txt 2>&1
  echo "== $name (exit $?, $SECONDS s)"; head -40 $OUT/$name-headline.txt
  head -60 $OUT/$name-stalls.txt 2>/dev/null
done
tar czf $OUT/ncu.tgz -C $OUT $(cd $OUT && ls) && (cd $OUT && ls | grep -v ncu.tgz | xargs rm -f)
