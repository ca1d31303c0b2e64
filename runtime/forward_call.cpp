#include "runtime/forward_call.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "codegen/forward_config.h"
#include "codegen/norm_problem.h"
#include "normjit/normjit.hpp"
#include "runtime/backward_call.h"
#include "runtime/buffer_overlap.h"

namespace normjit::runtime {
namespace {

[[noreturn]] void reject(const NormProblem& p, const std::string& what, const std::string& todo) {
  throw Error(Status::InvalidArgument,
              "normjit: bad argument to the " + codegen::describe_forward(p) + ": " + what + ". " + todo);
}


// Pointers and values of fused options the problem does not ask for: the caller and the
// problem disagree, and either reading would be a guess.
void check_forward_flags(const NormProblem& p, const ForwardArgs& a) {
  const bool dropout = p.dropout != DropoutMask::None;
  const bool pre_norm_sum = codegen::forms_pre_norm_sum(p);
  if (!p.residual && a.residual)
    reject(p, "residual is given but the residual option is off", "Set residual to add it to the branch, or pass NULL.");
  if (!pre_norm_sum && a.residual_out)
    reject(p, "residual_out is given but none of residual, rowscale and dropout is on, so h is x itself",
           "Pass NULL for residual_out: the backward reads x.");
  if (!p.rowscale && a.rowscale)
    reject(p, "rowscale is given but the rowscale option is off", "Set rowscale to scale x by it, or pass NULL.");
  if (!dropout && (a.dropout_mask || a.dropout_p != 0 || a.dropout_seed != 0 || a.dropout_offset != 0))
    reject(p, "dropout_mask, dropout_p, dropout_seed or dropout_offset is given but dropout is off",
           "Set dropout to the mask's form (bytes or bits), or pass NULL and zeros.");
  if (p.gate == Gate::None && a.z)
    reject(p, "z is given but gate is off", "Set gate (after_norm or before_norm) for a gated RMSNorm, or pass NULL.");
  if (!p.parallel && (a.weight1 || a.bias1 || a.y1))
    reject(p, "weight1, bias1 or y1 is given but parallel is off",
           "Set parallel for a second norm of the same input, or pass NULL for the second norm's pointers.");
  if (p.parallel && !p.has_weight && a.weight1)
    reject(p, "weight1 is given but has_weight is false (both norms have γ, or neither)",
           "Set has_weight, or pass NULL for weight1.");
  if (p.parallel && !p.has_bias && a.bias1)
    reject(p, "bias1 is given but has_bias is false (both norms have β, or neither)",
           "Set has_bias, or pass NULL for bias1.");
  if (dropout) check_dropout_p(a.dropout_p, [&p](const std::string& what, const std::string& todo) { reject(p, what, todo); });
  if (dropout && a.m > (int64_t{1} << 32))
    reject(p, "m = " + std::to_string(a.m) + " rows: dropout draws are indexed by 32-bit rows",
           "Split the call into calls of at most 2^32 rows, each with its own dropout_offset.");
}

// Outputs may be written over an input they are computed from when each element is read
// before the same thread writes it (every family does so): y over x, h over x or the residual,
// each with the same rows. Any other shared byte loses a value: two outputs in one buffer, an
// output over an input it is not computed from element by element (z, γ, the statistics), or
// an output that starts anywhere in an input but at its very first element.
void check_forward_aliases(const NormProblem& p, const ForwardArgs& a) {
  const int64_t m = a.m, n = p.n;
  const int weight_size = codegen::dtype_size(p.weight_dtype);
  const TensorBytes outputs[] = {
      mask_bytes("dropout_mask", a.dropout_mask, m, a.dropout_mask_stride,
                 a.dropout_mask ? codegen::dropout_mask_row_bytes(p.dropout, n) : 0),
      row_tensor_bytes("y", a.y, m, a.y_stride, n, p.dy_dtype),
      row_tensor_bytes("residual_out", a.residual_out, m, a.residual_out_stride, n, p.x_dtype),
      row_tensor_bytes("y1", a.y1, m, a.y1_stride, n, p.dy_dtype),
      vector_bytes("mean", a.mean, m, 4),
      vector_bytes("rstd", a.rstd, m, 4)};
  const TensorBytes inputs[] = {row_tensor_bytes("x", a.x, m, a.x_stride, n, p.x_dtype),
                                row_tensor_bytes("residual", a.residual, m, a.residual_stride, n, p.x_dtype),
                                row_tensor_bytes("z", a.z, m, a.z_stride, n, p.x_dtype),
                                vector_bytes("weight", a.weight, n, weight_size),
                                vector_bytes("bias", a.bias, n, weight_size),
                                vector_bytes("weight1", a.weight1, n, weight_size),
                                vector_bytes("bias1", a.bias1, n, weight_size),
                                vector_bytes("rowscale", a.rowscale, m, 4)};
  static constexpr InPlace in_place[] = {{"y", "x"}, {"residual_out", "x"}, {"residual_out", "residual"}};
  check_overlaps(outputs, inputs, in_place, "y may be x, and residual_out may be x or residual, each as that very "
                 "tensor: the same pointer, stride and dtype",
                 [&p](const std::string& what, const std::string& todo) { reject(p, what, todo); });
}

}  // namespace

CheckedForwardCall check_forward_call(const NormProblem& problem, const ForwardArgs& in) {
  const NormProblem p = codegen::resolve_forward_problem(problem);
  CheckedForwardCall out{p, in};
  ForwardArgs& a = out.args;
  const bool layer_norm = p.kind == NormKind::LayerNorm;
  const bool dropout = p.dropout != DropoutMask::None;

  if (a.m < 0) reject(p, "m = " + std::to_string(a.m) + " is negative", "Pass the number of rows (0 or more).");
  if (!(std::isfinite(a.eps) && a.eps >= 0))
    reject(p, "eps = " + std::to_string(a.eps) + " is not a finite number >= 0",
           "Pass the epsilon added to the variance (1e-5 is torch's default for LayerNorm).");
  if (!p.has_weight && a.weight)
    reject(p, "weight is given but has_weight is false", "Set has_weight to scale by γ, or pass NULL for weight.");
  if (!p.has_bias && a.bias)
    reject(p, std::string("bias is given but has_bias is false") + (layer_norm ? "" : " (RMSNorm has no bias)"),
           "Set has_bias (LayerNorm) to add β, or pass NULL for bias.");
  if (!layer_norm && a.mean)
    reject(p, "mean is given for RMSNorm, which has none", "Pass NULL for mean, or use LayerNorm.");
  check_forward_flags(p, a);

  struct Required { const char* name; const void* ptr; bool needed; };
  const Required required[] = {{"x", a.x, a.m > 0},
                               {"y", a.y, a.m > 0},
                               {"weight", a.weight, a.m > 0 && p.has_weight},
                               {"bias", a.bias, a.m > 0 && p.has_bias},
                               {"residual", a.residual, a.m > 0 && p.residual},
                               {"rowscale", a.rowscale, a.m > 0 && p.rowscale},
                               {"z", a.z, a.m > 0 && p.gate != Gate::None},
                               {"y1", a.y1, a.m > 0 && p.parallel},
                               {"weight1", a.weight1, a.m > 0 && p.parallel && p.has_weight},
                               {"bias1", a.bias1, a.m > 0 && p.parallel && p.has_bias}};
  for (const Required& r : required)
    if (r.needed && !r.ptr)
      reject(p, std::string(r.name) + " is NULL", std::string("Pass a device pointer for ") + r.name + ".");

  const auto rejected = [&p](const std::string& what, const std::string& todo) { reject(p, what, todo); };
  int alignment = p.alignment;
  alignment = std::min(alignment, check_row_tensor("x", a.x, a.x_stride, p.n, a.m, p.x_dtype, rejected));
  alignment = std::min(alignment, check_row_tensor("y", a.y, a.y_stride, p.n, a.m, p.dy_dtype, rejected));
  // Optional row tensors bound the vector width only when given.
  const RowTensor rows[] = {
      {"residual", a.residual, &a.residual_stride, p.x_dtype},
      {"residual_out", a.residual_out, &a.residual_out_stride, p.x_dtype},
      {"z", a.z, &a.z_stride, p.x_dtype},
      {"y1", a.y1, &a.y1_stride, p.dy_dtype}};
  for (const auto& r : rows) {
    const int allowed = check_row_tensor(r.name, r.ptr, *r.stride, p.n, r.ptr ? a.m : 0, r.dtype, rejected);
    alignment = std::min(alignment, allowed);
  }
  if (dropout) check_dropout_mask_stride(p.dropout, p.n, a.dropout_mask_stride, rejected);
  if (a.m > 0) check_forward_aliases(p, a);
  struct Vector { const char* name; const void* ptr; int size; };
  const int weight_size = codegen::dtype_size(p.weight_dtype);
  const Vector vectors[] = {{"weight", a.weight, weight_size}, {"bias", a.bias, weight_size},
                            {"weight1", a.weight1, weight_size}, {"bias1", a.bias1, weight_size},
                            {"mean", a.mean, 4}, {"rstd", a.rstd, 4}, {"rowscale", a.rowscale, 4}};
  for (const Vector& v : vectors) check_vector_alignment(v.name, v.ptr, v.size, rejected);
  // γ and β are read with the rows' vectors, so they bound the alignment too.
  if (a.m > 0)
    for (const void* params : {a.weight, a.bias, a.weight1, a.bias1})
      if (params) alignment = std::min(alignment, row_alignment(params, 0, weight_size, 1));
  out.problem.alignment = std::max(alignment, 1);
  // Phased kernels read every row tensor at x's phase (γ and β element by element, any address).
  const RowTensor x_and_y[] = {{"x", a.x, &a.x_stride, p.x_dtype}, {"y", a.y, &a.y_stride, p.dy_dtype}};
  out.problem.rows_in_phase = p.rows_in_phase && rows_in_phase(x_and_y, a.x_stride, p.x_dtype) &&
                              rows_in_phase(rows, a.x_stride, p.x_dtype);
  return out;
}

ForwardParams forward_params(const ForwardArgs& a) {
  const bool dropout = a.dropout_p > 0;
  // p·2^32 < 2^32 for every p < 1 the checks let through; floor keeps a draw's chance of being
  // dropped at most p.
  const int64_t drop_below = dropout ? static_cast<int64_t>(std::floor(a.dropout_p * 4294967296.0)) : 0;
  return ForwardParams{a.m,
                       a.x,
                       a.x_stride,
                       a.weight,
                       a.bias,
                       a.y,
                       a.y_stride,
                       a.mean,
                       a.rstd,
                       a.eps,
                       a.residual,
                       a.residual_stride,
                       a.residual_out,
                       a.residual_out_stride,
                       a.rowscale,
                       a.dropout_mask,
                       a.dropout_mask_stride,
                       dropout_keep_scale(a.dropout_p),
                       a.dropout_seed,
                       a.dropout_offset,
                       std::min<int64_t>(drop_below, 0xFFFFFFFFll),
                       a.z,
                       a.z_stride,
                       a.weight1,
                       a.bias1,
                       a.y1,
                       a.y1_stride};
}

}  // namespace normjit::runtime
