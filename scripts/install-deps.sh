#!/usr/bin/env bash
# Installs what normjit needs to build on a Debian/Ubuntu machine that already has the CUDA
# toolkit (nvcc, NVRTC, cuda.h) under /usr/local/cuda. Does nothing when all is there.
set -euo pipefail

need=()
dpkg -s libtomlplusplus-dev >/dev/null 2>&1 || need+=(libtomlplusplus-dev)
dpkg -s llvm-dev >/dev/null 2>&1 || need+=(llvm-dev)
dpkg -s libgtest-dev >/dev/null 2>&1 || need+=(libgtest-dev)
command -v cmake >/dev/null || need+=(cmake)
command -v ninja >/dev/null || need+=(ninja-build)
command -v g++ >/dev/null || need+=(g++)
# The Python package's tests (a stage of scripts/test.sh) and the GPU scripts.
command -v python3 >/dev/null || need+=(python3)
# The test command also fuzzes (clang's libFuzzer) and runs the CPU suite under sanitizers.
command -v clang++ >/dev/null || need+=(clang)

sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
install() {
  echo "install-deps: installing $*"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@"
}
[ ${#need[@]} -eq 0 ] || install "${need[@]}"
# The sanitizer and libFuzzer runtimes of the clang installed (14 on Debian 12, 18 on Ubuntu 24.04).
clang_major="$(clang++ -dumpversion | cut -d. -f1)"
dpkg -s "libclang-rt-$clang_major-dev" >/dev/null 2>&1 || install "libclang-rt-$clang_major-dev"

if [ ! -f /usr/local/cuda/include/nvrtc.h ] && ! command -v nvcc >/dev/null; then
  echo "install-deps: the CUDA toolkit is missing (expected /usr/local/cuda): install it first" >&2
  exit 1
fi
