#!/usr/bin/env bash
# Session 15, call 11: exhaustive tuning of few fp32 rows (N 8192-32768, M 2-128), where the
# column pass is in the search space but not the heuristic.
set -uo pipefail
b=build-device; o=$OUT
export NORMJIT_CACHE_DIR=$(mktemp -d)
{
for k in layernorm rmsnorm; do for n in 8192 16384 32768; do
  timeout 60 $b/normjit tune --kind $k --n $n --m 1,4,37,128 --dtype fp32 --weight-dtype fp32 --exhaustive
done; done
} > $o/tune.txt 2>&1
echo "tune done at ${SECONDS}s"
python3 - $o/tune.txt <<'PY'
import sys,collections
best=collections.defaultdict(lambda:[1e9,'',1e9,'']); heur={}
for l in open(sys.argv[1]):
    if l.startswith('  fit '):
        shape,cfg,us=[x.strip() for x in l[6:].split('|')]
        us=float(us); heur.setdefault(shape,(us,cfg)); b=best[shape]
        if us<b[0]: b[0],b[1]=us,cfg
        if 'column_pass' in cfg and us<b[2]: b[2],b[3]=us,cfg
for s,(u,c,cu,cc) in best.items():
    print(f"{s[:14]} {s[s.find('M<='):]:7s} heur {heur[s][0]:7.2f} best {u:7.2f} column {cu:7.2f} ({cc[-38:]}) | best: {c[-50:]}")
PY
