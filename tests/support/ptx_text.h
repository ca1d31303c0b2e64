// Reading a PTX module as text, for tests that check what a kernel's code does or leaves out.
#pragma once
#include <string>
#include <vector>

#include "codegen/kernel_source.h"

namespace normjit::test {

// A kernel's PTX for sm_90 as the engine would compile it (NVRTC on the CPU; throws with NVRTC's
// log on failure). `what` names the problem in that log.
std::string sm90_ptx(const codegen::KernelSource& src, const std::string& what);

// The lines of one .entry's body in a PTX module (empty if the module has no such entry).
std::vector<std::string> entry_body(const std::string& ptx, const std::string& entry);

}  // namespace normjit::test
