#!/usr/bin/env bash
# Session 34, call 5 (H200): Nsight Compute of LN bf16 5003 (align 2): the heuristic's staged
# block (320 threads, 2 an SM, 59% of copy), the tuned 640 threads of an element a thread
# prefetching (63%), and the probe's staged kernel at 640 threads (92%, bench/probes/realign_rows.cu).
set -uo pipefail
B=build-device/normjit
tuned=$(mktemp -d) && cp bench/results/2026-11-29-h200-6549637-odd-tune/tuning.toml $tuned/
scripts/ncu-profile.sh $OUT/ncu ln5003-staged -- $B tune --kind layernorm --dtype bf16 --weight-dtype fp32 --n 5003 --align 2 --m 13413
NCU_CACHE_DIR=$tuned scripts/ncu-profile.sh $OUT/ncu ln5003-tuned -- $B bench --kinds layernorm --dtypes bf16 --weights fp32 --n 5003 --reps 2
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
rep=$(mktemp -d)/probe
timeout 120 $ncu --set full --import-source no --kernel-name-base mangled -k regex:ILi5003ELi640EL7Variant5E -c 1 -f -o $rep \
  build-probe/realign_rows > $OUT/ncu/probe-run.txt 2>&1
$ncu --import $rep.ncu-rep --page details > $OUT/ncu/probe-details.txt 2>&1
$ncu --import $rep.ncu-rep --page source --csv --print-source sass > $OUT/ncu/probe-sass.csv 2>&1
python3 bench/ncu_stalls.py $OUT/ncu/probe-sass.csv --top 12 > $OUT/ncu/probe-stalls.txt 2>&1
for f in $OUT/ncu/*-details.txt; do echo "== $f"; grep -E "Block Size|Duration|DRAM Throughput|L1/TEX Cache Throughput|Achieved Occupancy|No Eligible|Issued Warp|Registers Per|Executed Ipc" $f | cut -c1-110; done
for f in $OUT/ncu/*-stalls.txt; do echo "== $f"; head -22 $f; done
rm -f $OUT/ncu/*-sass.csv
tar -C $OUT -czf $OUT/ncu.tgz ncu && rm -rf $OUT/ncu
echo "done at $SECONDS s"
