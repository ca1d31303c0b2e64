// The machine code (SASS) of a cubin, by NVIDIA's nvdisasm: for reading on a machine without a
// GPU what ptxas made of a kernel (the width of its loads, local memory, the loop bodies).
#pragma once
#include <string>
#include <vector>

namespace normjit::tools {

// nvdisasm's path: $NORMJIT_NVDISASM, else the first `nvdisasm` on PATH, else the CUDA
// toolkit's (/usr/local/cuda/bin). Throws std::runtime_error saying where it looked and how
// to get one when none is there.
std::string find_disassembler();

// Writes cubin to a temporary file and runs `tool -c` (find_disassembler's nvdisasm) on it, its
// output going to this process's stdout. Throws std::runtime_error when it cannot be run or
// exits non-zero.
void print_sass(const std::string& tool, const std::vector<char>& cubin);

}  // namespace normjit::tools
