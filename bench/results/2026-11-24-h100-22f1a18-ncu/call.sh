#!/usr/bin/env bash
# Session 16, call 2: Nsight Compute (--set full, stall sampling by SASS line) of the long-row
# clusters at 22f1a18, and of LN 8192 (92% of copy) to set them against.
set -uo pipefail
b=build-device; w=$(mktemp -d); o=$OUT
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
for spec in 'layernorm 65536 1024' 'layernorm 262144 256' 'rmsnorm 65536 1024' 'layernorm 8192 8192'; do
  set -- $spec; t=$1-$2
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 150 $ncu --set full -k nj_norm_backward -c 1 -f -o $w/$t \
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
    reasons = [c for c in h if c.startswith('stall_') or 'Stall' in c]
    tot = sum(float(r[ci] or 0) for r in data if len(r) > ci)
    print('==', os.path.basename(f), 'samples', tot, 'columns:', h[:12])
    top = sorted((r for r in data if len(r) > ci), key=lambda r: -float(r[ci] or 0))[:30]
    for r in top:
        print(f"{100*float(r[ci] or 0)/tot:5.1f}%  {r[si][:90]}")
PY
cat $w/stalls.txt | head -150
grep -E "DRAM Throughput|L2 Cache Throughput|L1/TEX Cache|Achieved Occupancy|No Eligible|Issued Warp|Stall|Warp Cycles Per Issued|Theoretical Occ|Block Limit|Shared Memory Config|Bank" $w/*-details.txt | cut -c1-200 | head -120
tar -C $w --exclude="*.ncu-rep" -czf $o/ncu.tgz . ; ls -la $o
