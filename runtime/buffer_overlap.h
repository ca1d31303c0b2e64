// Whether a call's outputs share memory with its other tensors, forward and backward alike.
// Comparing base pointers alone misses an output that starts inside another tensor (y = x + 1
// element) or whose rows land between another's: such a call passes every other check and
// then reads what it has already overwritten. So each tensor is taken as the bytes it spans,
// from its first element to one past its last, and two tensors conflict when those intersect.
// The span includes the padding between rows, so column slices of one wide buffer (rows that
// interleave without touching) are rejected too: telling those apart exactly, row against row,
// is not worth its cost on every launch, and a rejection is never a wrong result (such a caller
// passes separate buffers).
#pragma once
#include <cstdint>

#include "llvm/ADT/ArrayRef.h"
#include "normjit/norm_problem.hpp"
#include "runtime/backward_call.h"

namespace normjit::runtime {

// One tensor of a call: its bytes, [begin, end), and what an in-place alias of it must match.
struct TensorBytes {
  const char* name = nullptr;
  const void* ptr = nullptr;  // null: not given, spans nothing
  uintptr_t begin = 0;
  uintptr_t end = 0;          // saturates at the top of the address space rather than wrapping
  int64_t stride = 0;         // elements between rows; 0 for what is never written in place
  DType dtype = DType::Default;
};

// m rows of n `dtype` elements, `stride` (resolved, >= n) elements apart. No rows: empty.
TensorBytes row_tensor_bytes(const char* name, const void* ptr, int64_t m, int64_t stride, int64_t n, DType dtype);
// m rows of `row_bytes` bytes, `stride_bytes` apart: the dropout keep-mask.
TensorBytes mask_bytes(const char* name, const void* ptr, int64_t m, int64_t stride_bytes, int64_t row_bytes);
// `count` elements of `element_size` bytes: γ, β, mean, rstd, rowscale, a workspace (bytes).
TensorBytes vector_bytes(const char* name, const void* ptr, int64_t count, int64_t element_size);

// True when both are given and share at least one byte.
bool overlaps(const TensorBytes& a, const TensorBytes& b);

// An output the call lets be written over an input's very rows (the same pointer, stride and
// dtype), because its kernels read each element before the same thread writes it there.
struct InPlace {
  const char* output;
  const char* input;
};

// Rejects an output that shares a byte with another output, or with an input unless it is
// that input exactly (pointer, stride, dtype) and `in_place` lists the pair. `in_place_rule`
// tells the caller, in the messages, what may be written in place. Builds no string unless it
// rejects: this runs on every launch.
void check_overlaps(llvm::ArrayRef<TensorBytes> outputs, llvm::ArrayRef<TensorBytes> inputs,
                    llvm::ArrayRef<InPlace> in_place, const char* in_place_rule, RejectArgument reject);

}  // namespace normjit::runtime
