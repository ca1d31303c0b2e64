// The problems the tests are built from: a kind, dtypes, and which affine parameters (γ, β)
// the norm has. Names are short and identifier-safe, for test names and failure messages.
#pragma once
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

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

// One backward variant, N apart: kind, x dtype (dy's and dx's too), γ/β dtype, affine form.
struct Variant {
  NormKind kind;
  DType x_dtype;
  DType weight_dtype;
  Affine affine;
  NormProblem problem(int64_t n) const { return make_problem(kind, n, x_dtype, weight_dtype, affine); }
};

// Every variant the library lists (26): LayerNorm with γ and β, γ, β or neither; RMSNorm with γ
// or without; x in fp32, fp16, bf16; γ/β in fp32 or in x's dtype (the weight dtype only matters
// where there is a γ or β).
std::vector<Variant> every_variant();
// The six the sanitizers' runs take (every kernel path's memory traffic, fewer dtype pairs):
// LayerNorm with γ and β, RMSNorm with γ, fp32 weights, x in fp32, fp16, bf16.
std::vector<Variant> sanitize_variants();

// "LayerNorm_bf16_weightf32_WeightAndBias": a test name's suffix; and how gtest prints a Variant.
std::string variant_label(const Variant& v);
void PrintTo(const Variant& v, std::ostream* os);

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
