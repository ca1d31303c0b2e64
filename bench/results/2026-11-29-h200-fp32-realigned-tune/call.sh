#!/usr/bin/env bash
# Session 36, call 2 (H200), build-device = the commit of this script: fp32 rows aligned to less
# than 16 bytes may take realigned 8- and 16-byte slots (tuner candidates only; the heuristic is
# unchanged).
# 1) GPU tests of every tuner candidate at every 4-byte shift (backward and forward), and the
#    odd-row tests.
# 2) Exhaustive tuning of fp32 rows of an element (N odd, 4-byte aligned) again, now with the
#    realigned candidates; then bench --graph, heuristic against the tuned database.
# 3) The forward's tuning at three of those N.
set -uo pipefail
B=build-device
[ -n "${SKIP_GPU_TESTS:-}" ] || GPU_TEST_SHARDS=16 GPU_TEST_FILTER='Tuning.*:ForwardTuning.*:EveryN/*:BackwardMisalignedPointers.*:BackwardStridedRows.*' \
  BUILD_DIR=$B OUT=$OUT timeout 200 scripts/gpu-run.sh gpu-tests > $OUT/gpu-subset.txt 2>&1
echo "gpu subset exit $? at $SECONDS s"; tail -4 $OUT/gpu-subset.txt
db=$(mktemp -d)
tune() {  # kind dtype n align [--forward]
  [ $SECONDS -lt 420 ] || { echo "out of time before $*"; return; }
  NORMJIT_CACHE_DIR=$db timeout 60 $B/normjit tune --kind $1 --dtype $2 --weight-dtype fp32 --n $3 --align $4 \
    --m $((67108864 / $3)) --exhaustive ${5:-} >>$OUT/tune.txt 2>>$OUT/tune.err
  echo "$* exit $? at $SECONDS s"
}
for n in 7001 14001 30001 6001 8001 10001 12001 20001 50001 5001 16001; do
  tune layernorm fp32 $n 4; tune rmsnorm fp32 $n 4
done
cp $db/tuning.toml $OUT/ 2>/dev/null
ns=5001,6001,7001,8001,10001,12001,14001,16001,20001,30001,50001
NORMJIT_CACHE_DIR=$(mktemp -d) timeout 60 $B/normjit bench --graph --kinds layernorm,rmsnorm --dtypes fp32 --weights fp32 \
  --n $ns --json $OUT/heuristic.json >$OUT/heuristic.txt 2>&1
NORMJIT_CACHE_DIR=$db timeout 60 $B/normjit bench --graph --kinds layernorm,rmsnorm --dtypes fp32 --weights fp32 \
  --n $ns --json $OUT/tuned.json >$OUT/tuned.txt 2>&1
python3 bench/compare_bench.py $OUT/heuristic.json $OUT/tuned.json > $OUT/compare.txt 2>&1
cut -c1-170 $OUT/compare.txt
for n in 7001 14001 30001; do tune layernorm fp32 $n 4 --forward; tune rmsnorm fp32 $n 4 --forward; done
grep -E '^(layernorm|rmsnorm)' $OUT/tune.txt | sed -E 's/ dy=fp32 dx=fp32 weight=fp32 \+weight( \+bias)?//' | cut -c1-300
echo "done at $SECONDS s"
tar czf $OUT/logs.tgz -C $OUT tune.txt tune.err heuristic.txt tuned.txt heuristic.json tuned.json gpu-subset.txt gpu-tests.txt 2>/dev/null
(cd $OUT && rm -f tune.txt tune.err heuristic.* tuned.* gpu-subset.txt gpu-tests.txt)
