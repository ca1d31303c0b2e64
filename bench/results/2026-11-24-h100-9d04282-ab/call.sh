#!/usr/bin/env bash
# Call G of session 9 (the folder is named for the build it ran, 9d04282): A/B on one machine, the session's start (ccade6c, build-device/old) against
# its end (HEAD): small-M latency in graph replays and a few M·N = 64 Mi shapes, alternating
# old, new, old, new so drift shows.
set -uo pipefail
b=build-device; o=$OUT
scripts/gpu-environment.sh $b > $o/environment.txt 2>&1; head -3 $o/environment.txt
for round in 1 2; do
  for v in old new; do
    bin=$b/normjit; [ $v = old ] && bin=$b/old/normjit
    export NORMJIT_CACHE_DIR=$(mktemp -d)
    $bin bench --dtypes bf16 --weights fp32 --n 4096,8192 --m 1,37,199 --graph > $o/latency-$v-$round.txt 2>&1
    $bin bench --dtypes bf16,fp16 --weights fp32 --n 1000,4096,8192,32768 > $o/bandwidth-$v-$round.txt 2>&1
    echo "$v $round: $(grep -E '^(layer|rms)' $o/latency-$v-$round.txt | awk '{printf "%s/%s/%s %s  ", substr($1,1,2), $5, $4, $7}')"
  done
done
for f in $o/bandwidth-*.txt; do echo "$(basename $f): $(grep -E '^(layer|rms)' $f | awk '{printf "%s %s %s %s; ", substr($1,1,2), $2, $5, $9}')"; done
