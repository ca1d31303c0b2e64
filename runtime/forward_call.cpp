#include "runtime/forward_call.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "codegen/forward_config.h"
#include "codegen/norm_problem.h"
#include "normjit/normjit.hpp"
#include "runtime/backward_call.h"

namespace normjit::runtime {
namespace {

[[noreturn]] void reject(const NormProblem& p, const std::string& what, const std::string& todo) {
  throw Error(Status::InvalidArgument,
              "normjit: bad argument to the " + codegen::describe_forward(p) + ": " + what + ". " + todo);
}

}  // namespace

CheckedForwardCall check_forward_call(const NormProblem& problem, const ForwardArgs& in) {
  const NormProblem p = codegen::resolve_forward_problem(problem);
  CheckedForwardCall out{p, in};
  ForwardArgs& a = out.args;
  const bool layer_norm = p.kind == NormKind::LayerNorm;

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

  struct Required { const char* name; const void* ptr; bool needed; };
  const Required required[] = {{"x", a.x, a.m > 0},
                               {"y", a.y, a.m > 0},
                               {"weight", a.weight, a.m > 0 && p.has_weight},
                               {"bias", a.bias, a.m > 0 && p.has_bias}};
  for (const Required& r : required)
    if (r.needed && !r.ptr)
      reject(p, std::string(r.name) + " is NULL", std::string("Pass a device pointer for ") + r.name + ".");

  const auto rejected = [&p](const std::string& what, const std::string& todo) { reject(p, what, todo); };
  int alignment = p.alignment;
  alignment = std::min(alignment, check_row_tensor("x", a.x, a.x_stride, p.n, a.m, p.x_dtype, rejected));
  alignment = std::min(alignment, check_row_tensor("y", a.y, a.y_stride, p.n, a.m, p.x_dtype, rejected));
  if (a.m > 0 && a.y == a.x && a.y_stride != a.x_stride)
    reject(p, "y is x (in place) but y_stride = " + std::to_string(a.y_stride) + " and x_stride = " +
                  std::to_string(a.x_stride) + " differ",
           "In place, each row must be written where it was read: pass the same stride for both.");
  struct Vector { const char* name; const void* ptr; int size; };
  const int weight_size = codegen::dtype_size(p.weight_dtype);
  const Vector vectors[] = {{"weight", a.weight, weight_size}, {"bias", a.bias, weight_size},
                            {"mean", a.mean, 4}, {"rstd", a.rstd, 4}};
  for (const Vector& v : vectors) check_vector_alignment(v.name, v.ptr, v.size, rejected);
  // γ and β are read with the rows' vectors, so they bound the alignment too.
  if (a.m > 0) {
    if (a.weight) alignment = std::min(alignment, row_alignment(a.weight, 0, weight_size, 1));
    if (a.bias) alignment = std::min(alignment, row_alignment(a.bias, 0, weight_size, 1));
  }
  out.problem.alignment = std::max(alignment, 1);
  return out;
}

}  // namespace normjit::runtime
