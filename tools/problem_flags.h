// Reading a NormProblem from command-line flags, shared by the subcommands.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "normjit/norm_problem.hpp"

namespace normjit::tools {

// Flags: --kind layernorm|rmsnorm, --n N, --dtype fp32|fp16|bf16, --dy-dtype, --dx-dtype,
// --weight-dtype fp32|same, --no-weight, --bias / --no-bias, --align BYTES.
// Consumes the flags it knows from args and leaves the rest; throws std::invalid_argument.
NormProblem parse_problem_flags(std::vector<std::string>& args);
DType parse_dtype(const std::string& text);
// "1,37,199": every item a whole integer >= min_value, else std::invalid_argument naming `flag`.
std::vector<int64_t> parse_integer_list(const std::string& flag, const std::string& text, int64_t min_value);
std::string problem_flags_help();

// Removes "--name value" from args and returns value, or "" when absent.
std::string take_option(std::vector<std::string>& args, const std::string& name);
// Removes "--name" from args and returns whether it was there.
bool take_flag(std::vector<std::string>& args, const std::string& name);
// Turns on in p the fused options of one set as `normjit bench --fused` names it: none,
// residual, zero-centered, rowscale, dropout-bytes, dropout-bits, all (residual + zero-centered +
// rowscale + dropout-bits), gate, gate-before, parallel, recompute, joined with '+'. Throws
// std::invalid_argument, naming the set, for an unknown option or two that cannot be combined.
void apply_fused_set(const std::string& set, NormProblem& p);
// Removes "--memory-rate B" from args and returns B, the device's peak memory bytes an SM cycle
// the heuristic is to assume (a number >= 0), or 0 (the H100's rules) when absent.
double take_memory_rate(std::vector<std::string>& args);

}  // namespace normjit::tools
