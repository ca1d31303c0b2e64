// Which GPU archs the command compiles for: named with --arch, or those of this machine's GPUs.
#pragma once
#include <string>
#include <vector>

namespace normjit::tools {

// "sm_90", "sm_80,sm_90" (each value may be a comma list) -> {90, 80}, in order, without
// repeats. Throws std::invalid_argument naming a value not of the form sm_XY.
std::vector<int> parse_arch_list(const std::vector<std::string>& values);

// The distinct archs of the GPUs present, in device order; empty (and `why` filled) when the
// driver or a device is missing. Never throws.
std::vector<int> gpu_archs(std::string* why);

// Every value of a repeatable option ("--arch a --arch b"), removed from args.
std::vector<std::string> take_repeated_option(std::vector<std::string>& args, const std::string& name);

}  // namespace normjit::tools
