// What makes two backward problems different kernels, and whether a problem can be served.
// Pure C++: no CUDA calls.
#pragma once
#include <string>

#include "codegen/pass.h"
#include "normjit/norm_problem.hpp"

namespace normjit::codegen {

int dtype_size(DType dtype);           // bytes per element (Default: 0)
const char* dtype_name(DType dtype);   // "fp32", "fp16", "bf16", "default"
const char* kind_name(NormKind kind);  // "layernorm", "rmsnorm"

// The problem with every Default dtype replaced and alignment made a power of two in [1, 16]
// (0 becomes 16). Call validate_problem first.
NormProblem resolve_problem(const NormProblem& problem);

// Throws normjit::Error(InvalidArgument or Unsupported) naming the field, the value, and what
// is accepted. Accepts any N >= 1, any listed dtype combination, LayerNorm with or without γ/β,
// RMSNorm with or without γ.
void validate_problem(const NormProblem& problem, Pass pass = Pass::Backward);  // pass: named in messages

// "layernorm N=4096 x=bf16 dy=bf16 dx=bf16 weight=fp32 +weight +bias align=16", then any fused
// options (" +residual +zero-centered-weight +rowscale +dropout=bits +gate=after-norm
// +parallel +recompute"); none: nothing more.
std::string describe(const NormProblem& problem);
// The fused options' part of describe: " +residual +rowscale ...", or "" when none is on.
std::string describe_options(const NormProblem& problem);

// Whether any fused option (docs/FUSED.md) is on: only then does the kernel carry fused code.
bool has_fused_options(const NormProblem& problem);
// Whether the row's work has the option-free shape: no fused option changes what a thread keeps
// across the row's reductions (the gate's z, parallel norms' second dy and sums, recompute's y).
// The elementwise options (residual, zero-centred γ, row scale, dropout) only add loads or
// stores an element, so launch rules timed without options fit them too.
bool has_option_free_row_shape(const NormProblem& problem);
// x and dy both in a 16-bit type (dx and the weights aside).
bool sixteen_bit_rows(const NormProblem& problem);
const char* dropout_mask_name(DropoutMask mask);  // "none", "bytes", "bits"
// Bytes of one row of a keep-mask of n elements: n as bytes, ceil(n/8) as bits (0 without dropout).
int64_t dropout_mask_row_bytes(DropoutMask mask, int64_t n);
const char* gate_name(Gate gate);                 // "none", "after-norm", "before-norm"


}  // namespace normjit::codegen

namespace normjit {
bool operator==(const NormProblem& a, const NormProblem& b);
}  // namespace normjit
