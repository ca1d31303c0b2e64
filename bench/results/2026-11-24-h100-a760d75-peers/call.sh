#!/usr/bin/env bash
# Session 13, call 15 (a760d75): bench/peers.py (scripts/gpu-peers.sh) for LayerNorm, bf16, bf16
# weights, M·N = 64 Mi, every N of the sweep: normjit against torch eager, torch.compile and
# Liger-Kernel 0.8.5 (the wheel carried in .whl/, never committed). Last run: session 6
# (79688fa), before shared sums, packed rows and the fused rules.
set -uo pipefail
b=build-device
scripts/gpu-environment.sh $b > $OUT/environment.txt 2>&1
BUILD_DIR=$b timeout 570 scripts/gpu-peers.sh --kinds "${KINDS:-layernorm}" > /dev/null 2>&1
echo "exit $?"; tail -30 $OUT/peers.txt
# Call 16 ran the same for RMSNorm: KINDS=rmsnorm bash call.sh; mv $OUT/peers.txt $OUT/peers-rms.txt;
# mv $OUT/peers.json $OUT/peers-rms.json
