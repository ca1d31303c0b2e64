// Checks one forward call's pointers, strides and eps against its problem before anything is
// launched, and works out the alignment its rows actually have. Pure C++ (no CUDA calls), so
// every bad argument is testable on the CPU.
#pragma once
#include "normjit/norm_problem.hpp"
#include "runtime/launch_params.h"

namespace normjit::runtime {

struct CheckedForwardCall {
  NormProblem problem;  // resolve_forward_problem's; alignment lowered to what the pointers and strides give
  ForwardArgs args;     // strides resolved (0 -> n)
};

// `problem` must have passed codegen::validate_forward_problem. Throws normjit::Error
// (InvalidArgument) naming the argument, the value and what to do.
CheckedForwardCall check_forward_call(const NormProblem& problem, const ForwardArgs& args);

// The kernel's parameter for a checked call's args: the pointers and strides as they are, and
// dropout's p as the kernel uses it (keep_scale = 1/(1 − p), drop_below = p·2^32 rounded down).
ForwardParams forward_params(const ForwardArgs& checked);

}  // namespace normjit::runtime
