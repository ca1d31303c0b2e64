#!/usr/bin/env bash
# Session 16, calls 12-13, on nvidia-h200-x2 (first lent this session): issue 6's several-GPU checks
# (scripts/gpu-multi.sh: the C++ MultiGpu.* tests, the Python MultiGpuTest, examples/ddp_train.py
# over NCCL with NCCL_NVLS_ENABLE=0), build at cded23a.
set -uo pipefail
BUILD_DIR=build-device timeout 320 scripts/gpu-multi.sh; echo "gpu-multi exit $?"
