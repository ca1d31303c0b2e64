#!/usr/bin/env bash
# Session 23, call 2 (working tree on 5ed1f96 plus experiment hooks not committed): forward rows
# of an element a thread a pass (align 2, and fp32 at odd N) with min_blocks = 2048 / threads
# (NJ_EXP_MB=1: 32 registers, every SM's threads), alone and with call 1's warp-shifted moments
# (NJ_EXP_WM=1), against the same binary without the hooks.
set -uo pipefail
b=build-device; o=$OUT; w=$(mktemp -d)
shapes="--forward --graph --weights fp32 --dtypes bf16,fp32 --n 2049,3001,4095,5003,6001,8191,12289"
scripts/bench-ab.sh $b/normjit $b/v/mb $w mb "$shapes" > $o/ab-mb.txt 2>&1
echo "mb done at ${SECONDS}s"; cat $o/ab-mb.txt
scripts/bench-ab.sh $b/normjit $b/v/mbwm $w mbwm "$shapes" > $o/ab-mbwm.txt 2>&1
echo "mbwm done at ${SECONDS}s"; cat $o/ab-mbwm.txt
(cd $w && tar -czf $o/results.tgz *.json)
