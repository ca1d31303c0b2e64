#!/usr/bin/env bash
# Session 15, call 2: the column pass as a programmatic dependent launch, rows packed: its GPU tests,
# and exhaustive tuning of LN/RMS 4096/8192 at M = 1, 37, 199 with its candidates in the space.
set -uo pipefail
b=build-device; o=$OUT
export NORMJIT_CACHE_DIR=$(mktemp -d)
timeout 240 $b/tests/normjit_gpu_tests --gtest_filter='BackwardColumnPass*:BackwardSmMargin*:BackwardDeterminism*' > $o/gpu-tests.txt 2>&1
tail -5 $o/gpu-tests.txt; grep -E "Failure|FAILED" -A6 $o/gpu-tests.txt | head -40
{
for k in layernorm rmsnorm; do for n in 4096 8192; do for m in 1 37 199; do
  timeout 60 $b/normjit tune --kind $k --n $n --m $m --dtype bf16 --weight-dtype fp32 --exhaustive
done; done; done
timeout 60 $b/normjit tune --kind layernorm --n 8192 --m 199 --dtype fp32 --weight-dtype fp32 --exhaustive
timeout 60 $b/normjit tune --kind layernorm --n 8192 --m 199 --dtype fp16 --weight-dtype fp16 --exhaustive
for m in 37 128; do timeout 60 $b/normjit tune --kind layernorm --n 16384 --m $m --dtype bf16 --weight-dtype fp32 --exhaustive; done
timeout 60 $b/normjit tune --kind rmsnorm --n 16384 --m 128 --dtype bf16 --weight-dtype fp32 --exhaustive
timeout 60 $b/normjit tune --kind layernorm --n 2048 --m 199 --dtype bf16 --weight-dtype fp32 --exhaustive
} > $o/tune.txt 2>&1
grep -E "^(layer|rms)" $o/tune.txt | cut -c1-20,80-200
# best column candidate vs best overall per shape
python3 - $o/tune.txt <<'PY'
import sys,re,collections
best=collections.defaultdict(lambda:[1e9,'',1e9,''])
for l in open(sys.argv[1]):
    if l.startswith('  fit '):
        shape,cfg,us=[x.strip() for x in l[6:].split('|')]
        us=float(us); b=best[shape]
        if us<b[0]: b[0],b[1]=us,cfg
        if 'column_pass' in cfg and us<b[2]: b[2],b[3]=us,cfg
for s,(u,c,cu,cc) in best.items():
    print(f"{s[:60]:60s} best {u:8.2f} ({c[-60:]})  column {cu:8.2f} ({cc[-40:]})")
PY
