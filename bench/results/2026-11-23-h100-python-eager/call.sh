#!/usr/bin/env bash
# Call F: the Python package's GPU suite, the transformer example and the host-overhead bench
# with the eager fast path (uncommitted Python changes over the a224538 library).
set -uo pipefail
{ echo "date: $(date -u +%FT%TZ)"; echo "library: $(cat build-device/COMMIT)"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } > $OUT/environment.txt
cat $OUT/environment.txt
t0=$(date +%s)
BUILD_DIR=build-device OUT=$OUT timeout 420 scripts/gpu-python.sh > /dev/null 2>&1; echo "python rc=$? $(( $(date +%s)-t0 ))s"
grep -E "^python:|curves|ms/step|FAIL|Error|===== .*exit" $OUT/python.txt | head -30
