#!/usr/bin/env bash
# Session 15, call 3: the heuristic takes the column pass at few rows. Every GPU test (8 shards),
# then small M in graph replays, this build against ed3cf68's (build-device/old/normjit, the
# session's start) in the same run: bf16 rows, fp32 and bf16 γ, N 4096-16384, M 1-256.
set -uo pipefail
b=build-device; o=$OUT
scripts/gpu-environment.sh $b > $o/environment.txt 2>&1
export NORMJIT_CACHE_DIR=$(mktemp -d)
BUILD_DIR=$b GPU_TEST_SHARDS=8 timeout 300 scripts/gpu-run.sh gpu-tests > $o/gpu-run.txt 2>&1
grep -hE "^\[  (FAILED|PASSED) |tests ran" $o/gpu-tests.txt $o/gpu-run.txt | sort | uniq -c | head -20
shapes="--kinds layernorm,rmsnorm --dtypes bf16 --weights fp32,same --n 4096,8192,12288,16384 --m 1,4,16,37,64,128,199,256 --graph"
for which in old new; do
  bin=$b/normjit; [ $which = old ] && bin=$b/old/normjit
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 200 $bin bench $shapes --json $o/small-m-$which.json > $o/small-m-$which.txt 2>&1
  echo "$which exit $? at ${SECONDS}s"
done
python3 - $o/small-m-old.json $o/small-m-new.json <<'PY'
import json,sys
old,new=[json.load(open(f)) for f in sys.argv[1:3]]
key=lambda r:(r['kind'],r['dtype'],r['weight_dtype'],r['n'],r['m'])
o={key(r):r for r in old['rows']}
print("kind dtype w n m  old_us new_us (graph) old_plain new_plain")
for r in new['rows']:
    k=key(r); a=o.get(k)
    if a: print(*k, a.get('graph_us'), r.get('graph_us'), a['us'], r['us'])
PY
