#!/usr/bin/env bash
# On the GPU machine, from the repository root, with the build folder copied there (nothing is
# compiled here) and PyTorch installed system-wide: the Python package's GPU tests, the
# transformer example, the host-overhead bench and the modules' host-time breakdown.
# Everything goes into ONE file, $OUT/python.txt; the exit status is non-zero when any fails.
#   BUILD_DIR=build-py scripts/gpu-python.sh        (default build folder: build)
set -uo pipefail
cd "$(dirname "$0")/.."
build="${BUILD_DIR:-build}"
out="${OUT:-/tmp/normjit-out}"
mkdir -p "$out"
log="$out/python.txt"
export NORMJIT_LIBRARY="$(cd "$build" 2>/dev/null && pwd)/libnormjit.so"
# A fresh kernel cache: every problem compiles once here, as on a first run in production.
export NORMJIT_CACHE_DIR="$(mktemp -d)"
trap 'rm -rf "$NORMJIT_CACHE_DIR"' EXIT
python="${PYTHON:-python3}"
status=0
step() {  # step NAME COMMAND...: runs it with a header and its time, output into the log
  local name="$1" rc start=$SECONDS
  shift
  echo "===== $name: $*"
  "$@" 2>&1
  rc=$?
  echo "===== $name: exit $rc, $((SECONDS - start)) s"
  [ "$rc" -eq 0 ] || status=1
}
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "library built from: $(cat "$build/COMMIT" 2>/dev/null || echo unknown)"
  echo "python sources at: $(git rev-parse --short HEAD 2>/dev/null || echo unknown) $(git status --porcelain -- python examples bench scripts 2>/dev/null | grep -q . && echo '(modified)')"
  echo "library: $NORMJIT_LIBRARY"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1
  "$python" -c "import sys, torch; print('python', sys.version.split()[0], 'torch', torch.__version__, 'cuda', torch.version.cuda)" 2>&1
  if [ ! -f "$NORMJIT_LIBRARY" ]; then
    echo "no $build/libnormjit.so: build it on the build machine (BUILD_DIR=$build scripts/build.sh) and copy the folder"
    status=1
  else
    # In 4 processes at once (python/tests/run.py --shards): 3-4 minutes in one.
    step tests "$python" python/tests/run.py --shards "${PY_TEST_SHARDS:-4}"
    step example "$python" examples/pytorch_transformer.py
    step overhead "$python" bench/python_overhead.py
    # A training-sized call too, where the workspace (one per stream, reused) is not zero.
    step overhead-m4096 "$python" bench/python_overhead.py --m 4096 --n 256
    # Where a module's forward + backward spends its host time, against torch's and a bare
    # Python autograd node (LayerNorm's step read 1.8-2.9x torch's in python_overhead's tables).
    step host-breakdown "$python" bench/host_breakdown.py
  fi
  echo "gpu-python.sh: exit $status"
} > "$log" 2>&1
tail -40 "$log"
exit $status
