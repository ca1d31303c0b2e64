#!/usr/bin/env bash
# Session 13, call 14: an experiment, not committed code: b5cd75d with experiment.patch (the search
# space also lists one-block shared-sums configs with merge = 2 and 4 when NJ_EXP_MERGE is set).
# Question: do merged pairs of shared-sums blocks (half or a quarter of the partial rows) beat
# the unmerged ones where LayerNorm's partial rows are 6-8% of the main bytes?
# Exhaustive tuning, bf16, fp32 γ, M·N = 64 Mi.
set -uo pipefail
b=build-device; o=$OUT
scripts/gpu-environment.sh $b > $o/environment.txt 2>&1
export NORMJIT_CACHE_DIR=$(mktemp -d) NJ_EXP_MERGE=1
timeout 500 bash -c "
  $b/normjit tune --kind layernorm --n 16384 --m 4096 --dtype bf16 --weight-dtype fp32 --exhaustive
  $b/normjit tune --kind layernorm --n 14336 --m 4681 --dtype bf16 --weight-dtype fp32 --exhaustive
  $b/normjit tune --kind layernorm --n 12288 --m 5461 --dtype bf16 --weight-dtype fp32 --exhaustive
  $b/normjit tune --kind layernorm --n 5120 --m 13107 --dtype bf16 --weight-dtype fp32 --exhaustive
  $b/normjit tune --kind rmsnorm --n 16384 --m 4096 --dtype bf16 --weight-dtype fp32 --exhaustive
" 2>/dev/null > $o/tune-merge.txt
echo "exit $?" >> $o/tune-merge.txt
for n in 16384 14336 12288 5120; do grep "fit" $o/tune-merge.txt | grep "N=$n " | grep "shared_sums" | awk -F'|' '{print $1 $3, "|", $2}' | sed 's/ *fit //' | sort -t'|' -k1 | head -0; done
grep "fit" $o/tune-merge.txt | grep "shared_sums" | grep -v cluster | awk -F'|' '{split($1,a," "); print a[2], a[3], $3, "|", $2}' | sort -k1,2 -k3n | head -60
