#!/usr/bin/env bash
# Call L of session 8: the bench's new part% column over the bf16 sweep (fp32 weights).
set -uo pipefail
b=build-device; o=$OUT
export NORMJIT_CACHE_DIR=$(mktemp -d)
{ echo "date: $(date -u +%FT%TZ)"; echo "commit: $(cat $b/COMMIT)"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } > $o/environment.txt
cat $o/environment.txt
timeout 120 $b/normjit bench --dtypes bf16,fp32 --weights fp32 --latency --json $o/bench.json > $o/bench.txt 2>&1; echo "bench rc=$?"
grep -E "^(layer|rms)" $o/bench.txt | awk '{print $1, $2, $4, $5, $9, $NF}'
