#!/usr/bin/env bash
# On a machine with 2 or more GPUs, from the repository root, with the build folder copied there
# (nothing is compiled here) and PyTorch installed system-wide: the several-GPU checks of issue 6.
#   1. the C++ GPU test MultiGpu.* (one engine, two devices on two threads),
#   2. the Python test MultiGpuTest (torch tensors on cuda:0 and cuda:1),
#   3. examples/ddp_train.py (DistributedDataParallel over NCCL, one process a GPU, against a
#      single-GPU step on the same global batch).
# Everything goes into ONE file, $OUT/multi.txt. Exit status: 0 all passed, 1 a failure (a test
# that skipped on a machine with 2 GPUs counts as one), 3 fewer than 2 GPUs.
#   BUILD_DIR=build-embed OUT=/tmp/out scripts/gpu-multi.sh        (default build folder: build)
set -uo pipefail
cd "$(dirname "$0")/.."
build="${BUILD_DIR:-build}"
out="${OUT:-/tmp/normjit-out}"
mkdir -p "$out"
log="$out/multi.txt"
export NORMJIT_LIBRARY="$(cd "$build" 2>/dev/null && pwd)/libnormjit.so"
# A fresh kernel cache: both devices' first calls compile (or wait for the other's compile).
export NORMJIT_CACHE_DIR="$(mktemp -d)"
trap 'rm -rf "$NORMJIT_CACHE_DIR"' EXIT
# NVLink multicast stays off on the lent machines (ddp_train.py sets it too).
export NCCL_NVLS_ENABLE=0
python="${PYTHON:-python3}"
status=0
step() {  # step NAME COMMAND...: runs it with a header and its time; a skip counts as a failure
  local name="$1" rc start=$SECONDS output
  shift
  echo "===== $name: $*"
  output="$("$@" 2>&1)"
  rc=$?
  echo "$output"
  if [ "$rc" -eq 0 ] && grep -Eq '\[  SKIPPED \]|skipped=' <<<"$output"; then  # gtest's, unittest's
    echo "===== $name: something SKIPPED on a machine with $gpus GPUs: counted as a failure"
    rc=1
  fi
  echo "===== $name: exit $rc, $((SECONDS - start)) s"
  [ "$rc" -eq 0 ] || status=1
}
gpus="$(nvidia-smi --query-gpu=index --format=csv,noheader 2>/dev/null | wc -l)"
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "library built from: $(cat "$build/COMMIT" 2>/dev/null || echo unknown)"
  echo "sources at: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader 2>&1
  nvidia-smi topo -m 2>&1
  "$python" -c "import sys, torch; print('python', sys.version.split()[0], 'torch', torch.__version__, 'cuda', torch.version.cuda, 'devices', torch.cuda.device_count())" 2>&1
  if [ "$gpus" -lt 2 ]; then
    echo "gpu-multi.sh: needs 2 GPUs, nvidia-smi lists $gpus"
    status=3
  elif [ ! -x "$build/tests/normjit_gpu_tests" ] || [ ! -f "$NORMJIT_LIBRARY" ]; then
    echo "no $build/tests/normjit_gpu_tests or $build/libnormjit.so: build them on the build machine"
    echo "(BUILD_DIR=$build scripts/build.sh) and copy the folder"
    status=1
  else
    step cpp "$build/tests/normjit_gpu_tests" --gtest_filter='MultiGpu.*'
    step python "$python" python/tests/test_torch_gpu.py -v MultiGpuTest
    step ddp "$python" examples/ddp_train.py --gpus 2
  fi
  echo "gpu-multi.sh: exit $status"
} > "$log" 2>&1
tail -40 "$log"
exit $status
