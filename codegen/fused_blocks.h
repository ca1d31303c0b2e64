// Template lines that only kernels with a fused option carry. In a template they sit between
// a "// fused:begin" line and a "// fused:end" line; codegen drops them (markers included)
// for a problem without options, so its source is byte for byte what it was before fused
// options existed (same cache keys, same PTX), and keeps them (markers dropped) otherwise.
#pragma once
#include <string>

namespace normjit::codegen {

// `text` with its fused blocks kept or dropped, and their marker lines removed. Throws
// std::logic_error for unbalanced markers (a defect of the template, not of the caller).
std::string select_fused_blocks(const std::string& text, bool keep);

}  // namespace normjit::codegen
