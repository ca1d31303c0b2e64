#!/usr/bin/env bash
# Session 11, call 8: initcheck and synccheck over the whole sanitize matrix, uncapped (as
# call 7 ran memcheck), the two tools as two processes at once (each one's time is mostly the
# host's float64 reference and input generation). One folder of logs per tool.
set -uo pipefail
b=build-device
scripts/gpu-environment.sh $b > $OUT/environment.txt 2>&1
start=$(date +%s)
for tool in initcheck synccheck; do
  mkdir -p $OUT/$tool
  env OUT=$OUT/$tool BUILD_DIR=$b SANITIZE_TOOLS=$tool SANITIZE_WARMUP=0 "SANITIZE_FILTER_$tool=AllVariants/BackwardMatrix.*" \
    "CAP_$tool=1073741824" "TIMEOUT_$tool=560" timeout 580 scripts/gpu-sanitize.sh > /dev/null 2>&1 &
done
wait
echo "both tools done after $(( $(date +%s) - start )) s" >> $OUT/environment.txt
grep -h -E "^sanitize:" $OUT/*/sanitize.txt; tail -1 $OUT/environment.txt
