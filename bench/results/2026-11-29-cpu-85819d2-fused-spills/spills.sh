#!/bin/bash
# The heuristic's fused configs on the H200 (memory rate 18.4) that spill, bf16/fp16, fp32 γ.
for dt in bf16 fp16; do for f in gate gate-before parallel recompute residual all; do for k in layernorm rmsnorm; do
  case $f in gate|gate-before) [ $k = layernorm ] && continue;; esac
  for n in 1024 1536 2048 3072 4096 5120 6144 8192 10240 12288 14336 16384 20480 24576 32768 65536; do
    echo "$k $dt $f $n"
  done; done; done; done | xargs -P 16 -L 1 bash -c 'r=$(./build/normjit emit --kind $0 --dtype $1 --weight-dtype fp32 --fused $2 --n $3 --memory-rate 18.4 --resources 2>&1 | awk "/^launch:/{sub(\"launch:  \",\"\");l=\$0} /^nj_norm_backward/{print \$2, \$5+\$6, l}"); echo "$0 $1 $2 $3 $r"'
