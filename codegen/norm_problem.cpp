#include "codegen/norm_problem.h"

#include <sstream>

#include "normjit/normjit.hpp"

namespace normjit::codegen {
namespace {

bool is_storage_dtype(DType d) { return d == DType::F32 || d == DType::F16 || d == DType::BF16; }
bool is_dtype_or_default(DType d) { return d == DType::Default || is_storage_dtype(d); }
DType or_x(DType d, DType x) { return d == DType::Default ? x : d; }

[[noreturn]] void reject(Pass pass, const NormProblem& p, const std::string& what, const std::string& todo,
                         Status status = Status::InvalidArgument) {
  throw Error(status, "normjit: cannot build a " + std::string(kind_name(p.kind)) + " " + pass_name(pass) + " with N=" +
                          std::to_string(p.n) + ": " + what + ". " + todo);
}

}  // namespace

int dtype_size(DType dtype) {
  switch (dtype) {
    case DType::F32: return 4;
    case DType::F16: return 2;
    case DType::BF16: return 2;
    case DType::Default: return 0;
  }
  return 0;
}

const char* dtype_name(DType dtype) {
  switch (dtype) {
    case DType::F32: return "fp32";
    case DType::F16: return "fp16";
    case DType::BF16: return "bf16";
    case DType::Default: return "default";
  }
  return "unknown";
}

const char* kind_name(NormKind kind) {
  switch (kind) {
    case NormKind::LayerNorm: return "layernorm";
    case NormKind::RMSNorm: return "rmsnorm";
  }
  return "unknown-norm";
}

void validate_problem(const NormProblem& p, Pass pass) {
  if (p.kind != NormKind::LayerNorm && p.kind != NormKind::RMSNorm)
    reject(pass, p, "kind " + std::to_string(static_cast<int>(p.kind)) + " is not a norm kind",
           "Use NJ_LAYERNORM (0) or NJ_RMSNORM (1).");
  if (p.n < 1) reject(pass, p, "N must be at least 1", "Pass the hidden size (the row length) as n.");
  if (p.n > (int64_t{1} << 31))
    reject(pass, p, "N above 2^31 is not supported", "Split the row or file an issue with your use case.",
           Status::Unsupported);
  if (!is_storage_dtype(p.x_dtype))
    reject(pass, p, std::string("x dtype '") + dtype_name(p.x_dtype) + "' (" +
                  std::to_string(static_cast<int>(p.x_dtype)) + ") is not a storage dtype",
           "x must be fp32, fp16 or bf16.");
  const struct { const char* field; DType value; } optional_dtypes[] = {
      {"dy", p.dy_dtype}, {"dx", p.dx_dtype}, {"weight", p.weight_dtype}};
  for (const auto& d : optional_dtypes)
    if (!is_dtype_or_default(d.value))
      reject(pass, p, std::string(d.field) + " dtype " + std::to_string(static_cast<int>(d.value)) + " is unknown",
             std::string(d.field) + " must be fp32, fp16, bf16 or default (same as x).");
  const DType weight = or_x(p.weight_dtype, p.x_dtype);
  if (weight != DType::F32 && weight != p.x_dtype)
    reject(pass, p, std::string("weight dtype ") + dtype_name(weight) + " with x dtype " + dtype_name(p.x_dtype),
           "The weight (and bias) must be fp32 or the dtype of x.", Status::Unsupported);
  if (p.kind == NormKind::RMSNorm && p.has_bias)
    reject(pass, p, "RMSNorm has no bias", "Set has_bias to false (0) for RMSNorm.");
  if (p.zero_centered_weight && !p.has_weight)
    reject(pass, p, "zero_centered_weight is set but has_weight is false: there is no γ to shift by 1",
           "Set has_weight (γ stored as γ − 1), or clear zero_centered_weight.");
  if (p.dropout != DropoutMask::None && p.dropout != DropoutMask::Bytes && p.dropout != DropoutMask::Bits)
    reject(pass, p, "dropout mask form " + std::to_string(static_cast<int>(p.dropout)) + " is unknown",
           "Use NJ_DROPOUT_NONE (0), NJ_DROPOUT_BYTES (1, a byte per element) or NJ_DROPOUT_BITS (2, a bit per "
           "element).");
  if (p.gate != Gate::None && p.gate != Gate::AfterNorm && p.gate != Gate::BeforeNorm)
    reject(pass, p, "gate " + std::to_string(static_cast<int>(p.gate)) + " is unknown",
           "Use NJ_GATE_NONE (0), NJ_GATE_AFTER_NORM (1, y = rmsnorm(x)·γ·silu(z)) or NJ_GATE_BEFORE_NORM (2, y = "
           "rmsnorm(x·silu(z))·γ).");
  // LayerNorm's gate after the norm would need β in the kernel (dz takes the whole output
  // x̂·γ + β), which a backward is never given; the gated norm in use (Mamba-2) is an RMSNorm.
  if (p.gate != Gate::None && p.kind != NormKind::RMSNorm)
    reject(pass, p, std::string("gate ") + gate_name(p.gate) + " is set on a LayerNorm: the gated norm is RMSNorm only",
           "Use kind RMSNorm for a gated norm (Mamba-2's RMSNormGated), or set gate to none.");
  if (p.parallel && p.gate != Gate::None)
    reject(pass, p, "parallel and gate are both set: which of the two norms the gate would belong to is not defined",
           "Use one or the other.");
  // Recompute from the output recovers x̂ from y = x̂·γ + β: a gated output (y = x̂·γ·silu(z), or
  // the norm of x·silu(z)) and two norms' outputs are other functions, not supported here.
  if (p.recompute_from_output && p.gate != Gate::None)
    reject(pass, p, std::string("recompute_from_output and gate ") + gate_name(p.gate) +
                  " are both set: x̂ is recovered from y = x̂·γ + β, which a gated norm's output is not",
           "Pass x (and clear recompute_from_output) for a gated RMSNorm, or set gate to none.");
  if (p.recompute_from_output && p.parallel)
    reject(pass, p, "recompute_from_output and parallel are both set: x̂ would be recovered from one of the two norms' "
              "outputs, which is not supported",
           "Pass x (and clear recompute_from_output) for parallel norms, or clear parallel.");
  const int a = p.alignment == 0 ? 16 : p.alignment;
  if (a < 0 || (a & (a - 1)) != 0)
    reject(pass, p, "alignment " + std::to_string(p.alignment) + " is not a power of two",
           "Give the byte alignment rows are known to have (1, 2, 4, 8 or 16), or 0 for 16.");
}

NormProblem resolve_problem(const NormProblem& p) {
  NormProblem r = p;
  r.dy_dtype = or_x(p.dy_dtype, p.x_dtype);
  r.dx_dtype = or_x(p.dx_dtype, p.x_dtype);
  r.weight_dtype = or_x(p.weight_dtype, p.x_dtype);
  if (r.kind == NormKind::RMSNorm) r.has_bias = false;
  // With neither γ nor β the weight dtype changes nothing: one kernel, not two.
  if (!r.has_weight && !r.has_bias) r.weight_dtype = r.x_dtype;
  r.alignment = p.alignment <= 0 || p.alignment > 16 ? 16 : p.alignment;
  return r;
}

std::string describe(const NormProblem& p) {
  const NormProblem r = resolve_problem(p);
  std::ostringstream s;
  s << kind_name(r.kind) << " N=" << r.n << " x=" << dtype_name(r.x_dtype) << " dy=" << dtype_name(r.dy_dtype)
    << " dx=" << dtype_name(r.dx_dtype) << " weight=" << dtype_name(r.weight_dtype)
    << (r.has_weight ? " +weight" : " -weight");
  if (r.kind == NormKind::LayerNorm) s << (r.has_bias ? " +bias" : " -bias");
  s << " align=" << r.alignment << (r.alignment < 16 && !r.rows_in_phase ? " out-of-phase" : "") << describe_options(r);
  return s.str();
}

std::string describe_options(const NormProblem& r) {
  std::string s;
  if (r.residual) s += " +residual";
  if (r.zero_centered_weight) s += " +zero-centered-weight";
  if (r.rowscale) s += " +rowscale";
  if (r.dropout != DropoutMask::None) s += std::string(" +dropout=") + dropout_mask_name(r.dropout);
  if (r.gate != Gate::None) s += std::string(" +gate=") + gate_name(r.gate);
  if (r.parallel) s += " +parallel";
  if (r.recompute_from_output) s += " +recompute";
  return s;
}

bool has_fused_options(const NormProblem& p) {
  return p.residual || p.zero_centered_weight || p.rowscale || p.dropout != DropoutMask::None || p.gate != Gate::None ||
         p.parallel || p.recompute_from_output;
}

bool has_option_free_row_shape(const NormProblem& p) {
  return p.gate == Gate::None && !p.parallel && !p.recompute_from_output;
}

bool sixteen_bit_rows(const NormProblem& p) { return dtype_size(p.x_dtype) == 2 && dtype_size(p.dy_dtype) == 2; }

int64_t dropout_mask_row_bytes(DropoutMask mask, int64_t n) {
  return mask == DropoutMask::Bits ? (n + 7) / 8 : mask == DropoutMask::Bytes ? n : 0;
}

const char* dropout_mask_name(DropoutMask mask) {
  switch (mask) {
    case DropoutMask::None: return "none";
    case DropoutMask::Bytes: return "bytes";
    case DropoutMask::Bits: return "bits";
  }
  return "unknown";
}

const char* gate_name(Gate gate) {
  switch (gate) {
    case Gate::None: return "none";
    case Gate::AfterNorm: return "after-norm";
    case Gate::BeforeNorm: return "before-norm";
  }
  return "unknown";
}

}  // namespace normjit::codegen

namespace normjit {

bool operator==(const NormProblem& a, const NormProblem& b) {
  return a.kind == b.kind && a.n == b.n && a.x_dtype == b.x_dtype && a.dy_dtype == b.dy_dtype &&
         a.dx_dtype == b.dx_dtype && a.weight_dtype == b.weight_dtype && a.has_weight == b.has_weight &&
         a.has_bias == b.has_bias && a.alignment == b.alignment &&
         (a.alignment == 16 || a.rows_in_phase == b.rows_in_phase) &&
         a.residual == b.residual &&
         a.zero_centered_weight == b.zero_centered_weight && a.rowscale == b.rowscale && a.dropout == b.dropout &&
         a.gate == b.gate && a.parallel == b.parallel && a.recompute_from_output == b.recompute_from_output;
}

}  // namespace normjit
