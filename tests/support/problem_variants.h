// The problems the tests are built from: a kind, dtypes, and which affine parameters (γ, β)
// the norm has. Names are short and identifier-safe, for test names and failure messages.
#pragma once
#include <cstdint>
#include <string>

#include "normjit/norm_problem.hpp"

namespace normjit::test {

// The affine parameters of the forward: γ (weight) and β (bias, LayerNorm only).
enum class Affine { WeightAndBias, WeightOnly, BiasOnly, None };

const char* kind_label(NormKind kind);   // "LayerNorm", "RMSNorm"
const char* affine_label(Affine affine); // "WeightAndBias", ...
bool has_weight(Affine affine);
bool has_bias(Affine affine);

// A problem with every dtype spelled out (no Default): dy = x; dx = x unless given.
NormProblem make_problem(NormKind kind, int64_t n, DType x_dtype, DType weight_dtype, Affine affine,
                         DType dx_dtype = DType::Default);

// One row of a test's table of problems: make_problem's arguments, as a literal.
struct ProblemSpec {
  NormKind kind;
  DType x, weight;
  Affine affine;
  int64_t n;
  NormProblem problem() const { return make_problem(kind, n, x, weight, affine); }
};

// Default dtypes replaced by x's, as the library does.
NormProblem with_concrete_dtypes(NormProblem problem);

// "LayerNorm x=bf16 dy=bf16 dx=bf16 weight=f32 WeightAndBias N=1000", then any fused options
// (fused_label: " +residual +rowscale", or "" for none).
std::string describe_problem(const NormProblem& problem);
std::string fused_label(const NormProblem& problem);

// The largest power of two ≤ 16 that every row of contiguous x, dy and dx starts on, given
// 16-byte aligned bases: the alignment the engine derives for multi-row calls.
int contiguous_row_alignment(const NormProblem& problem);

}  // namespace normjit::test
