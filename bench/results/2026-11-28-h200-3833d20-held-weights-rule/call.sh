#!/usr/bin/env bash
# Session 30, call 2 (H200), branch next/forward-shared-weights at 3833d20: the forward's held
# weights as a rule (LayerNorm, fp32 γ and β, 16-bit rows, two slots a thread below 512 threads).
# The forward GPU tests; an A/B of the forward against main (5317640, build-device/v/old) at
# 2048-16384, 16-bit with fp32 γ; then Nsight Compute (--set full, stall sampling by SASS line) of
# the fused backward kernels issue 5 finds slowest (LN bf16 8192: none, recompute, parallel; RMS
# bf16 8192: none, gate), to see what bounds them where tuning found nothing.
set -uo pipefail
B=build-device
GPU_TEST_FILTER='Forward*' GPU_TEST_SHARDS=16 BUILD_DIR=$B OUT=$OUT timeout 150 scripts/gpu-run.sh gpu-tests > $OUT/gpu-run.txt 2>&1
echo "forward GPU tests: exit $? at $SECONDS s"; grep -E "^shard|FAILED" $OUT/gpu-run.txt | grep -v "PASSED  \] 1 test" | head -20
mkdir -p $OUT/ab
timeout 200 scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab \
  fwd "--forward --graph --dtypes bf16,fp16 --weights fp32 --n 2048,4096,5120,5632,6144,6656,7168,8192,10240,12288,16384" > $OUT/ab.txt 2>&1
echo "ab: exit $? at $SECONDS s"; grep -E "median|copy GB" $OUT/ab.txt
w=$(mktemp -d)
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
for spec in 'layernorm none' 'layernorm recompute' 'layernorm parallel' 'rmsnorm none' 'rmsnorm gate'; do
  [ $SECONDS -gt 470 ] && { echo "ncu: out of time before $spec"; break; }
  set -- $spec; t=$1-$2
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 90 $ncu --set full --import-source no -k nj_norm_backward -c 1 -f -o $w/$t \
    $B/normjit bench --kinds $1 --dtypes bf16 --weights fp32 --n 8192 --m 8192 --reps 1 --fused $2 > $w/$t-run.txt 2>&1
  $ncu --import $w/$t.ncu-rep --page details > $w/$t-details.txt 2>&1
  $ncu --import $w/$t.ncu-rep --page source --csv --print-source sass > $w/$t-sass.csv 2>&1
  echo "$t done at ${SECONDS}s"
done
python3 - $w <<'PY' > $w/stalls.txt 2>&1
import csv, sys, glob, os
for f in sorted(glob.glob(sys.argv[1] + '/*-sass.csv')):
    rows = list(csv.reader(open(f)))
    hdr = None
    for i, r in enumerate(rows):
        if 'Source' in r and any('Stall' in c for c in r): hdr = i; break
    if hdr is None: print(f, 'no header'); print(rows[:3]); continue
    h = rows[hdr]; data = rows[hdr + 1:]
    col = [c for c in h if c.startswith('Warp Stall Sampling (All')][0]
    ci = h.index(col); si = h.index('Source')
    tot = sum(float(r[ci] or 0) for r in data if len(r) > ci)
    print('==', os.path.basename(f), 'samples', tot, 'instructions', len(data))
    top = sorted((r for r in data if len(r) > ci), key=lambda r: -float(r[ci] or 0))[:30]
    for r in top:
        print(f"{100*float(r[ci] or 0)/tot:5.1f}%  {r[si][:100]}")
PY
grep -E "Duration|DRAM Throughput|L1/TEX Cache Throughput|Achieved Occupancy|No Eligible|Issued Warp|Warp Cycles Per Issued|Compute \(SM\)|Registers Per|Executed Ipc A|Stall" $w/*-details.txt | cut -c1-170 | head -90
cp $w/stalls.txt $OUT/
tar -C $w --exclude="*.ncu-rep" -czf $OUT/ncu.tgz .
tar -C $OUT -czf $OUT/logs.tgz ab gpu-tests.txt environment.txt && rm -rf $OUT/ab $OUT/gpu-tests.txt $OUT/environment.txt
