#!/usr/bin/env bash
# Session 34, call 1 (H200): bench/probes/realign_rows.cu — odd 16-bit rows read and written an
# element a thread, as two chunks a slot (Realigned), and as one chunk a lane with shuffles.
# Call 1 (probe-call1.txt) before shuffle31 was added; call 2 (probe-call2.txt) with it; call 4
# (probe.txt) with staged and staged-out, outputs checked against scalar.
# Built here: nvcc -O3 -std=c++17 -arch=sm_90 -o build-probe/realign_rows bench/probes/realign_rows.cu
set -uo pipefail
build-probe/realign_rows 2>&1 | tee $OUT/probe.txt
