// Checks one backward call's pointers, strides and flags against its problem before anything
// is launched, and works out the alignment its rows actually have. Pure C++ (no CUDA calls),
// so every bad argument is testable on the CPU.
#pragma once
#include <cstdint>
#include <string>

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
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
// A row tensor of a call, as its checks see it. vectors: whether the kernel reads its rows with
// the vectors the alignment allows (the backward's fallback x of recompute_from_output is read
// an element at a time).
struct RowTensor { const char* name; const void* ptr; int64_t* stride; DType dtype; bool vectors = true; };
// Whether a call's rows are in phase (NormProblem::rows_in_phase), backward and forward alike:
// every non-null row tensor's base on a 16-byte boundary, its stride (resolved, in elements)
// x's modulo 16 bytes, its elements of x's size.
bool rows_in_phase(llvm::ArrayRef<RowTensor> rows, int64_t x_stride, DType x_dtype);

// The checks every row tensor and every vector of a call gets, backward and forward alike.
// `reject(what, todo)` throws (the call's InvalidArgument, naming its problem).
using RejectArgument = llvm::function_ref<void(const std::string& what, const std::string& todo)>;
// Resolves a row tensor's stride (0 -> n); rejects a stride below n and, when there are rows,
// a pointer not aligned to the dtype's elements. Returns the alignment its rows allow (as
// row_alignment; 16 when m is 0, which bounds nothing).
int check_row_tensor(const char* name, const void* ptr, int64_t& stride, int64_t n, int64_t m, DType dtype,
                     RejectArgument reject);
// Dropout, backward and forward alike: p in [0, 1); the keep-mask's row stride in bytes
// resolved (0 -> a row: n bytes, or ceil(n/8) for bits) and rejected below a row.
void check_dropout_p(double p, RejectArgument reject);
void check_dropout_mask_stride(DropoutMask form, int64_t n, int64_t& stride, RejectArgument reject);
// Rejects a non-null vector (γ, β, mean, rstd, ...) not aligned to its `element_size` bytes.
void check_vector_alignment(const char* name, const void* ptr, int element_size, RejectArgument reject);

}  // namespace normjit::runtime
