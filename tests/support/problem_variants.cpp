#include "support/problem_variants.h"

#include <algorithm>

#include "support/host_tensor.h"

namespace normjit::test {

const char* kind_label(NormKind kind) { return kind == NormKind::LayerNorm ? "LayerNorm" : "RMSNorm"; }

const char* affine_label(Affine affine) {
  switch (affine) {
    case Affine::WeightAndBias: return "WeightAndBias";
    case Affine::WeightOnly: return "WeightOnly";
    case Affine::BiasOnly: return "BiasOnly";
    case Affine::None: return "NoAffine";
  }
  return "?";
}

bool has_weight(Affine affine) { return affine == Affine::WeightAndBias || affine == Affine::WeightOnly; }
bool has_bias(Affine affine) { return affine == Affine::WeightAndBias || affine == Affine::BiasOnly; }

NormProblem with_concrete_dtypes(NormProblem p) {
  if (p.dy_dtype == DType::Default) p.dy_dtype = p.x_dtype;
  if (p.dx_dtype == DType::Default) p.dx_dtype = p.x_dtype;
  if (p.weight_dtype == DType::Default) p.weight_dtype = p.x_dtype;
  return p;
}

NormProblem make_problem(NormKind kind, int64_t n, DType x_dtype, DType weight_dtype, Affine affine,
                         DType dx_dtype) {
  NormProblem p;
  p.kind = kind;
  p.n = n;
  p.x_dtype = x_dtype;
  p.dx_dtype = dx_dtype;
  p.weight_dtype = weight_dtype;
  p.has_weight = has_weight(affine);
  p.has_bias = has_bias(affine);
  return with_concrete_dtypes(p);
}

std::vector<Variant> every_variant() {
  std::vector<Variant> variants;
  for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm}) {
    const std::vector<Affine> affines = kind == NormKind::LayerNorm
        ? std::vector<Affine>{Affine::WeightAndBias, Affine::WeightOnly, Affine::BiasOnly, Affine::None}
        : std::vector<Affine>{Affine::WeightOnly, Affine::None};
    for (DType x : {DType::F32, DType::F16, DType::BF16})
      for (Affine affine : affines) {
        if (affine == Affine::None) {
          variants.push_back({kind, x, x, affine});
          continue;
        }
        variants.push_back({kind, x, DType::F32, affine});
        if (x != DType::F32) variants.push_back({kind, x, x, affine});
      }
  }
  return variants;
}

std::vector<Variant> sanitize_variants() {
  std::vector<Variant> variants;
  for (DType x : {DType::F32, DType::F16, DType::BF16}) {
    variants.push_back({NormKind::LayerNorm, x, DType::F32, Affine::WeightAndBias});
    variants.push_back({NormKind::RMSNorm, x, DType::F32, Affine::WeightOnly});
  }
  return variants;
}

std::string variant_label(const Variant& v) {
  std::string name = std::string(kind_label(v.kind)) + "_" + dtype_label(v.x_dtype) + "_";
  if (v.affine != Affine::None) name += std::string("weight") + dtype_label(v.weight_dtype) + "_";
  return name + affine_label(v.affine);
}

void PrintTo(const Variant& v, std::ostream* os) { *os << variant_label(v); }

std::string fused_label(const NormProblem& p) {
  std::string s;
  if (p.residual) s += " +residual";
  if (p.zero_centered_weight) s += " +zero-centered-weight";
  if (p.rowscale) s += " +rowscale";
  if (p.dropout == DropoutMask::Bytes) s += " +dropout=bytes";
  if (p.dropout == DropoutMask::Bits) s += " +dropout=bits";
  if (p.gate == Gate::AfterNorm) s += " +gate=after-norm";
  if (p.gate == Gate::BeforeNorm) s += " +gate=before-norm";
  if (p.parallel) s += " +parallel";
  if (p.recompute_from_output) s += " +recompute";
  return s;
}

std::string describe_problem(const NormProblem& problem) {
  const NormProblem p = with_concrete_dtypes(problem);
  const Affine affine = p.has_weight ? (p.has_bias ? Affine::WeightAndBias : Affine::WeightOnly)
                                     : (p.has_bias ? Affine::BiasOnly : Affine::None);
  return std::string(kind_label(p.kind)) + " x=" + dtype_label(p.x_dtype) + " dy=" + dtype_label(p.dy_dtype) +
         " dx=" + dtype_label(p.dx_dtype) + " weight=" + dtype_label(p.weight_dtype) + " " + affine_label(affine) +
         " N=" + std::to_string(p.n) + fused_label(p);
}

int contiguous_row_alignment(const NormProblem& problem) {
  const NormProblem p = with_concrete_dtypes(problem);
  int alignment = 16;
  for (DType d : {p.x_dtype, p.dy_dtype, p.dx_dtype}) {
    const int64_t row_bytes = p.n * dtype_bytes(d);
    alignment = std::min<int64_t>(alignment, row_bytes & -row_bytes);  // lowest set bit
  }
  return alignment;
}

}  // namespace normjit::test
