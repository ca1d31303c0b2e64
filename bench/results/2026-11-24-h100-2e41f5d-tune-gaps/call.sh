#!/usr/bin/env bash
# Session 15, call 7: exhaustive tuning where a target is missed by a little and the heuristic
# may not hold the best config: odd N (5003, 4095), parallel LayerNorm 8192 and 32768, the fp16
# gate at 4096 and 8192, and the forward's residual + byte-dropout at 16384-65536.
set -uo pipefail
b=build-device; o=$OUT
export NORMJIT_CACHE_DIR=$(mktemp -d)
t() { timeout 60 $b/normjit tune "$@" --exhaustive; }
{
for k in layernorm rmsnorm; do for dt in bf16 fp16; do t --kind $k --n 5003 --m 13413 --dtype $dt --weight-dtype fp32 --align 2; done; done
t --kind layernorm --n 4095 --m 16388 --dtype bf16 --weight-dtype fp32 --align 2
for dt in bf16 fp16; do
  t --kind layernorm --n 8192 --m 8192 --dtype $dt --weight-dtype fp32 --parallel
  t --kind layernorm --n 32768 --m 2048 --dtype $dt --weight-dtype fp32 --parallel
done
for g in after-norm before-norm; do for nm in '4096 16384' '8192 8192'; do set -- $nm
  t --kind rmsnorm --n $1 --m $2 --dtype fp16 --weight-dtype fp32 --gate $g; done; done
for k in layernorm rmsnorm; do for nm in '16384 4096' '32768 2048' '65536 1024'; do set -- $nm
  t --kind $k --n $1 --m $2 --dtype bf16 --weight-dtype fp32 --residual --dropout bytes --forward; done; done
} > $o/tune.txt 2>&1
echo "tune done at ${SECONDS}s"
python3 - $o/tune.txt <<'PY'
import sys,collections
best=collections.defaultdict(lambda:[1e9,'']); heur={}
for l in open(sys.argv[1]):
    if l.startswith('  fit '):
        shape,cfg,us=[x.strip() for x in l[6:].split('|')]
        us=float(us); heur.setdefault(shape,(us,cfg)); b=best[shape]
        if us<b[0]: b[0],b[1]=us,cfg
for s,(u,c) in best.items():
    h=heur[s]
    print(f"{s[:100]} | heur {h[0]:8.2f} best {u:8.2f} x{h[0]/u:5.3f} | {c}")
PY
