// ptxas's resource report of one compile, for the NVRTC tests' spill checks.
#pragma once
#include <gtest/gtest.h>

#include <vector>

#include "runtime/nvrtc.h"

namespace normjit::test {

// One entry per function of the compile; a test failure when the log has none, so that a check
// over the entries cannot pass by finding nothing to check (runtime::Nvrtc::compile asks NVRTC
// not to answer from its own cache, whose answers came without the report).
inline std::vector<runtime::KernelResources> ptxas_report(const runtime::CompileOutput& out) {
  std::vector<runtime::KernelResources> report = runtime::parse_ptxas_report(out.log);
  if (report.empty()) ADD_FAILURE() << "NVRTC's log has no ptxas resource report:\n" << out.log;
  return report;
}

}  // namespace normjit::test
