// The stable name of a compiled kernel: SHA-256 over everything that changes the cubin —
// the generated source, the NVRTC version, the target arch, the compile options and the
// normjit version. The same inputs give the same key in every process and on every machine.
#pragma once
#include <string>
#include <vector>

namespace normjit::codegen {

struct CompileTarget {
  int sm = 90;                // compute capability as major*10+minor
  std::string nvrtc_version;  // "13.0"
  // Line tables in the cubin, mapping its machine code to the generated source's lines (NVRTC
  // --generate-line-info; the machine code is the same bytes): for `normjit emit --cubin`, so
  // that a profile's SASS addresses can be read as source lines (bench/ncu_stalls.py --lines).
  // The engine's kernels leave them out.
  bool line_info = false;
  std::string arch() const { return "sm_" + std::to_string(sm); }
};

// The option among them that puts ptxas's resource report (registers, spills, stack) in
// NVRTC's log, which runtime::parse_ptxas_report reads.
inline constexpr const char kPtxasReportOption[] = "--ptxas-options=--verbose";

// The NVRTC options for target (the key hashes exactly these).
std::vector<std::string> compile_options(const CompileTarget& target);

// 64 lowercase hex characters.
std::string cache_key(const std::string& source, const CompileTarget& target);

const char* normjit_version();

}  // namespace normjit::codegen
