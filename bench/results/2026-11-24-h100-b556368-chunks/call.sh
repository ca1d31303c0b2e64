#!/usr/bin/env bash
# Session 15, call 6: the column pass in chunks (rows beyond the L2 budget) and segments (rows
# beyond 65536): its GPU tests, and exhaustive tuning of the long rows of the speed sweep
# (M·N = 64 Mi), where chunked column passes are now candidates.
set -uo pipefail
b=build-device; o=$OUT
export NORMJIT_CACHE_DIR=$(mktemp -d)
timeout 200 $b/tests/normjit_gpu_tests --gtest_filter='BackwardColumnPass*:BackwardDeterminism*' > $o/gpu-tests.txt 2>&1
tail -3 $o/gpu-tests.txt; grep -E "Failure" -A6 $o/gpu-tests.txt | head -30
{
for nm in '32768 2048' '65536 1024' '131072 512' '262144 256' '1048576 64'; do
  set -- $nm
  for k in layernorm rmsnorm; do timeout 60 $b/normjit tune --kind $k --n $1 --m $2 --dtype bf16 --weight-dtype fp32 --exhaustive; done
done
timeout 60 $b/normjit tune --kind layernorm --n 262144 --m 256 --dtype fp32 --weight-dtype fp32 --exhaustive
} > $o/tune.txt 2>&1
echo "tune done at ${SECONDS}s"
python3 - $o/tune.txt <<'PY'
import sys,collections
best=collections.defaultdict(lambda:[1e9,'',1e9,''])
heur={}
for l in open(sys.argv[1]):
    if l.startswith('  fit '):
        shape,cfg,us=[x.strip() for x in l[6:].split('|')]
        us=float(us); b=best[shape]
        heur.setdefault(shape,(us,cfg))
        if us<b[0]: b[0],b[1]=us,cfg
        if 'column_pass' in cfg and us<b[2]: b[2],b[3]=us,cfg
for s,(u,c,cu,cc) in best.items():
    print(f"{s[:28]} {s[s.find('M<='):]:8s} heur {heur[s][0]:8.2f} best {u:8.2f} ({c[-45:]})  column {cu:8.2f} ({cc[-28:]})")
PY
grep "fit " $o/tune.txt | grep column_pass | sed -E 's/^  fit ([a-z]+) (N=[0-9]+) x=([a-z0-9]+).*(M<=[0-9]+) \| threads=([0-9]+) .*column_pass=([0-9]+) \| (.*)/\1 \2 \3 \4 t\5 l\6 \7/'
