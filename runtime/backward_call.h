// Checks one backward call's pointers, strides and flags against its problem before anything
// is launched, and works out the alignment its rows actually have. Pure C++ (no CUDA calls),
// so every bad argument is testable on the CPU.
#pragma once
#include "normjit/norm_problem.hpp"

namespace normjit::runtime {

struct CheckedCall {
  NormProblem problem;  // resolved; alignment lowered to what the pointers and strides give
  BackwardArgs args;    // strides resolved (0 -> n)
};

// `problem` must have passed codegen::validate_problem. Throws normjit::Error
// (InvalidArgument) naming the argument, the value and what to do.
CheckedCall check_backward_call(const NormProblem& problem, const BackwardArgs& args);

// Largest power of two, at most 16, dividing the address (and, for several rows, the row
// pitch in bytes): the vector width the rows of one tensor allow.
int row_alignment(const void* base, int64_t stride_elements, int element_size, int64_t rows);

}  // namespace normjit::runtime
