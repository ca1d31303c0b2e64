#!/usr/bin/env bash
# Session 29, call 4 (H200), 836255d (the session's rules): exhaustive tuning of the forward's
# long rows and of LayerNorm's 16-bit rows with fp32 γ (data for the next forward rules; nothing
# adopted unmeasured), bench --graph heuristic against tuned on them; then bench/peers.py, every
# N of the sweep, LayerNorm and RMSNorm, weights in x's dtype, M·N = 64 Mi, fp16 then fp32 as
# the call's time allows (bf16 at 7 N ran in call 2; Liger-Kernel 0.8.5's wheel in .whl/).
set -uo pipefail
B=build-device
T=$(mktemp -d)
for s in "layernorm fp32 32768" "layernorm fp32 131072" "rmsnorm fp32 65536" "rmsnorm fp32 131072" "layernorm bf16 32768" \
         "rmsnorm bf16 131072" "layernorm bf16 262144" "layernorm bf16 8192" "layernorm bf16 14336" "layernorm bf16 7168"; do
  set -- $s
  [ $SECONDS -lt 60 ] || { echo "tune: out of time before $s"; continue; }
  w=""; [ $2 = bf16 ] && w="--weight-dtype fp32"
  NORMJIT_CACHE_DIR=$T timeout 20 $B/normjit tune --forward --kind $1 --dtype $2 $w --n $3 --m $((67108864 / $3)) --exhaustive 2>>$OUT/tune.err | grep -v "^  fit"
done > $OUT/tune-forward.txt
echo "tune: at $SECONDS s"; grep -E "^(layernorm|rmsnorm)" $OUT/tune-forward.txt | cut -c1-50,100-260
ARGS="--forward --graph --kinds layernorm,rmsnorm --dtypes bf16,fp32 --weights fp32 --n 7168,8192,14336,32768,65536,131072,262144"
NORMJIT_CACHE_DIR=$(mktemp -d) timeout 25 $B/normjit bench $ARGS --json $OUT/fwd-heuristic.json > $OUT/fwd-heuristic.txt 2>&1
NORMJIT_CACHE_DIR=$T timeout 25 $B/normjit bench $ARGS --json $OUT/fwd-tuned.json > $OUT/fwd-tuned.txt 2>&1
python3 bench/compare_bench.py $OUT/fwd-heuristic.json $OUT/fwd-tuned.json | cut -c1-200
echo "forward done at $SECONDS s"
for d in fp16 fp32; do
  left=$((560 - SECONDS)); [ $left -gt 60 ] || { echo "peers $d: out of time"; continue; }
  BUILD_DIR=$B timeout $left scripts/gpu-peers.sh --dtype $d > /dev/null 2>&1
  echo "peers $d: exit $? at $SECONDS s"
  mv $OUT/peers.txt $OUT/peers-$d.txt; mv $OUT/peers.json $OUT/peers-$d.json
done
tar -C $OUT -czf $OUT/logs.tgz tune-forward.txt tune.err fwd-heuristic.txt fwd-tuned.txt && rm -f $OUT/tune-forward.txt $OUT/tune.err $OUT/fwd-heuristic.txt $OUT/fwd-tuned.txt
