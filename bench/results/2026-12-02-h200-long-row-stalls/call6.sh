#!/usr/bin/env bash
# Session 66, call 6 (H200). build-device: 3cf8d9a (the grid's sixth stage). The standing (all
# four passes, bench --graph) against session 65's call 3 (74d6951; its fused forward predates
# 7242673's bf16 widening), as the next session's baseline.
set -uo pipefail
mkdir -p /tmp/base && tar xzf bench/results/2026-12-02-h200-forward-long-rows/call3/call3.tgz -C /tmp/base
BENCH_TIMEOUT=150 BUILD_DIR=build-device OUT=$OUT/logs/standing timeout 330 scripts/gpu-standing.sh /tmp/base/logs/standing > $OUT/standing.txt 2>&1
echo "standing exit $? at ${SECONDS}s"; tail -30 $OUT/standing.txt
tar czf $OUT/call6.tgz -C $OUT logs && rm -rf $OUT/logs
