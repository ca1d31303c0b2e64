// The float64 reference of the backward pass:
//   x̂ = (x − mean)·rstd   (RMSNorm: x̂ = x·rstd)      g = dy·γ   (g = dy without γ)
//   dx = rstd·(g − mean_N(g) − x̂·mean_N(g·x̂))        (RMSNorm: without the mean_N(g) term)
//   dγ = Σ_rows dy·x̂        dβ = Σ_rows dy
// computed in double from given statistics, so it checks the backward alone (whatever
// rounding the saved statistics had, the kernel and the reference see the same values).
// NaN and Inf propagate as IEEE arithmetic says, the same way they do in the kernels.
//
// Fused options (docs/FUSED.md): the forward was h = dropout(x_in)·rowscale + residual,
// y = norm(h) with γ stored as γ − 1 when zero-centred; x is h. Then
//   dh = (the above dx) + dresidual,   dresidual_in = dh,   dx = dh·rowscale[row]·keep/(1 − p).
#pragma once
#include <cstdint>
#include <vector>

#include "normjit/norm_problem.hpp"

namespace normjit::test {

struct NormInputs;

// Contiguous [m, n] double arrays.
struct ReferenceProblem {
  NormKind kind = NormKind::LayerNorm;
  int64_t m = 0, n = 0;
  const double* x = nullptr;
  const double* dy = nullptr;
  const double* mean = nullptr;    // [m], LayerNorm only
  const double* rstd = nullptr;    // [m]
  const double* weight = nullptr;  // [n] γ, or null: no γ (and no dγ)
  bool has_bias = false;           // compute dβ
  // Fused options (all off when null / false).
  bool zero_centered_weight = false;  // weight holds γ − 1
  const double* dresidual = nullptr;  // [m, n]: added to dh
  const double* rowscale = nullptr;   // [m]
  const double* keep = nullptr;       // [m, n] of 0 and 1: the dropout keep-mask
  double dropout_p = 0;               // with keep
};

struct ReferenceGrads {
  std::vector<double> dx;       // [m, n]
  std::vector<double> dweight;  // [n] when there is γ, else empty
  std::vector<double> dbias;    // [n] when has_bias, else empty
  std::vector<double> dresidual_in;  // [m, n] dh, when rowscale or keep is given, else empty
  // The 2-norms of the terms each result is built from (finite terms only): rstd·g for dx,
  // dy·x̂ for dγ, dy for dβ. A result much smaller than its terms is the product of
  // cancellation, and no floating-point kernel can give it to full relative accuracy; the
  // comparisons use these as the floor of the error's denominator (see compare.h).
  double dx_term_norm = 0;
  double dweight_term_norm = 0;
  double dbias_term_norm = 0;
  double dresidual_in_term_norm = 0;  // rstd·g and dresidual, before the branch's scale
};

ReferenceGrads reference_backward(const ReferenceProblem& problem);
// The stored inputs (rounded x, dy, γ; fp32 statistics) widened to double.
ReferenceGrads reference_backward(const NormInputs& inputs);

}  // namespace normjit::test
