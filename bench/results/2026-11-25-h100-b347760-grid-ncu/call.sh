#!/usr/bin/env bash
# Session 24, call 5 (H100): Nsight Compute (--set full, stall sampling by SASS line) of the grid
# cluster: LN bf16 1M (M = 64, the heuristic's) and LN bf16 262144 forced onto a grid cluster
# (NJ_EXP_GRID_FORCE, uncommitted hook; M = 256), to find the ~2 us a row that calls 2-4 left.
set -uo pipefail
b=build-device; w=$(mktemp -d); o=$OUT
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
for spec in 'layernorm 1048576 64 -' 'layernorm 262144 256 NJ_EXP_GRID_FORCE=262144'; do
  set -- $spec; t=$1-$2; e=$4; [ "$e" = - ] && e=
  env $e NORMJIT_CACHE_DIR=$(mktemp -d) timeout 200 $ncu --set full --import-source no -k nj_norm_backward -c 1 -f -o $w/$t \
    $b/normjit bench --kinds $1 --dtypes bf16 --weights fp32 --n $2 --m $3 --reps 1 > $w/$t-run.txt 2>&1
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
    print('==', os.path.basename(f), 'samples', tot)
    top = sorted((r for r in data if len(r) > ci), key=lambda r: -float(r[ci] or 0))[:40]
    for r in top:
        print(f"{100*float(r[ci] or 0)/tot:5.1f}%  {r[si][:100]}")
PY
cat $w/stalls.txt | head -100
grep -E "Duration|DRAM Throughput|L2 Cache Throughput|L1/TEX Cache Throughput|Achieved Occupancy|No Eligible|Issued Warp|Warp Cycles Per Issued|Memory Throughput|Compute \(SM\)|Registers Per|Shared Memory" $w/*-details.txt | cut -c1-160 | head -60
for f in $w/*-details.txt; do cp $f $o/; done; cp $w/stalls.txt $o/
tar -C $w --exclude="*.ncu-rep" -czf $o/ncu.tgz .
