#!/usr/bin/env bash
# Session 19, call 6: exhaustive tuning (graph replays, L2 flushed; bf16, fp32 γ, M·N = 64 Mi)
# of the fused problems call 5's scan found far below their option-free row at 5120-20480,
# backward and forward: data for rules of their own.
set -uo pipefail
b=build-device; o=$OUT
export NORMJIT_CACHE_DIR=$(mktemp -d)
tune() {  # PASS N ARGS...
  local pass=$1 n=$2; shift 2
  local fwd=""; [ "$pass" = fwd ] && fwd=--forward
  timeout 100 $b/normjit tune $fwd "$@" --n $n --dtype bf16 --weight-dtype fp32 --m $(( 67108864 / n )) --exhaustive > $o/t.txt 2>&1
  echo "tune $pass $n [$*] exit $?" >&2
  cat $o/t.txt >> $o/tune-all.txt
  grep -E "^(layernorm|rmsnorm) " $o/t.txt | grep -v "^.*fit " >> $o/tune-summary.txt
}
for n in 5120 7168 12288 14336 20480; do tune bwd $n --kind layernorm --recompute-from-output; done
for n in 7168 12288 14336 16384 20480; do tune bwd $n --kind layernorm --parallel; done
for n in 5120 12288 14336 16384; do tune bwd $n --kind rmsnorm --gate after-norm; done
for n in 14336 16384; do tune bwd $n --kind rmsnorm --gate before-norm; done
for n in 6144 10240 14336 16384 20480; do tune bwd $n --kind rmsnorm --parallel; done
tune bwd 16384 --kind rmsnorm --residual
tune bwd 16384 --kind rmsnorm --residual --rowscale --dropout bits --zero-centered-weight
tune bwd 20480 --kind rmsnorm --recompute-from-output
for n in 3072 7168 10240 14336 16384; do tune fwd $n --kind layernorm --residual --rowscale --dropout bits --zero-centered-weight; done
tune fwd 16384 --kind layernorm --residual
tune fwd 7168 --kind layernorm --parallel
tune fwd 20480 --kind rmsnorm --gate after-norm
rm -f $o/t.txt; gzip -f $o/tune-all.txt
