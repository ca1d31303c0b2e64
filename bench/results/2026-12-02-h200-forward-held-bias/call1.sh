#!/usr/bin/env bash
# Session 64, call 1 (H200), two command lines on the device (the second on the warm machine).
# build-device: 48a1939. The whole GPU suite and the standing on the fp16 widening (a208a27,
# d720556), which session 63 ran only on a 32-test subset (entry 77's next 0).
GPU_TEST_SHARDS=16 BUILD_DIR=build-device OUT=$OUT/logs timeout 560 scripts/gpu-run.sh gpu-tests > $OUT/suite.txt 2>&1
BENCH_TIMEOUT=200 BUILD_DIR=build-device OUT=$OUT/standing timeout 330 scripts/gpu-standing.sh bench/results/2026-12-02-h200-forward-clusters-of-16/standing > $OUT/standing.txt 2>&1
# The device returned the standing's backward and forward files; the fused passes' four files
# were left out (too many files under $OUT): their verdicts are in standing-check.txt only.
