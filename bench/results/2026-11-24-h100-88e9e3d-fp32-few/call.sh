#!/usr/bin/env bash
# Session 15, call 12 (the session's last heuristic change: the column pass for few fp32 rows):
# small M in graph replays, this build against ed3cf68's in the same run (fp32, N 8192-32768,
# M 16-128); every GPU test (8 shards).
set -uo pipefail
SECONDS=0
b=build-device; o=$OUT
shapes="--kinds layernorm,rmsnorm --dtypes fp32 --weights fp32 --n 8192,16384,32768 --m 16,37,64,100,128 --graph"
for which in old new; do
  bin=$b/normjit; [ $which = old ] && bin=$b/old/normjit
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 100 $bin bench $shapes --json $o/small-m-$which.json > /dev/null 2>&1
  echo "$which exit $? at ${SECONDS}s"
done
python3 - $o/small-m-old.json $o/small-m-new.json <<'PY' | tee $o/small-m.txt
import json,sys
old,new=[json.load(open(f)) for f in sys.argv[1:3]]
key=lambda r:(r['kind'],r['dtype'],r['weight_dtype'],r['n'],r['m'])
o={key(r):r for r in old['rows']}
print("kind dtype w n m | graph us old new | plain us old new | new config")
for r in new['rows']:
    k=key(r); a=o.get(k)
    if a: print(*k, '|', a['graph_us'], r['graph_us'], '|', a['us'], r['us'], '|', r['config'][-40:])
PY
GPU_TEST_SHARDS=8 BUILD_DIR=$b timeout 300 scripts/gpu-run.sh gpu-tests > $o/gpu-run.txt 2>&1
echo "gpu-tests exit $? at ${SECONDS}s" >> $o/gpu-run.txt; grep -E "^shard|exit" $o/gpu-run.txt
