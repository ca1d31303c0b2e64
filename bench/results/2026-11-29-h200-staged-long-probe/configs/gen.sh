#!/bin/bash
# usage: gen.sh KIND N -> candidate staged configs without spills (one per line)
k=$1; n=$2
first=0
for cl in 2 4 8 16; do
  slots=$((n/cl/8)); [ $slots -gt 2048 ] && continue; [ $slots -lt 256 ] && continue
  [ $first -ne 0 ] && [ $cl -gt $((4*first)) ] && continue; [ $first -eq 0 ] && first=$cl
  for pt in 1 2; do
    t=$((slots/pt)); [ $t -gt 1024 ] && continue; [ $t -lt 128 ] && continue
    for st in 2 3 4; do for ss in "" " shared_sums"; do for mb in 1 2; do
      c="threads=$t threads_per_row=$t vec=8 registers cluster=$cl staged stages=$st"; [ $mb = 2 ] && c="$c min_blocks=2"; c="$c$ss"
      # shared memory per block: stages x slice x 4 bytes (x and dy, 16-bit) + sums 8 bytes a column
      sm=$((st*n/cl*4)); [ -n "$ss" ] && sm=$((sm + n/cl*8))
      [ $((sm*mb)) -gt 225000 ] && continue
      out=$(/work/main/build/normjit emit --kind $k --dtype bf16 --weight-dtype fp32 --n $n --memory-rate 18.4 --resources --config "$c" 2>&1)
      sp=$(echo "$out" | grep nj_norm_backward | awk '{print $5}')
      [ "$sp" = "0" ] && echo "$c"
    done; done; done
  done
done
