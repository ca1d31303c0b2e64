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
// Gated RMSNorm, silu(z) = z·σ(z): after the norm, the norm's output gradient is dy·silu(z)
// (dγ, dx from it) and dz = dy·x̂·γ·silu'(z); before it, the norm's input is xg = x·silu(z)
// (x̂ = xg·rstd), its gradient d(xg) is the above dx, the gradient of x is d(xg)·silu(z) (then
// dresidual etc. as above) and dz = d(xg)·x·silu'(z).
// Parallel norms of one x, y0 = norm(x; γ, β) and y1 = norm(x; γ1, β1): g = dy·γ + dy1·γ1 in
// the above, dγ1 = Σ_rows dy1·x̂, dβ1 = Σ_rows dy1.
// Recompute from the output: x̂ = (y − β)/γ from the forward's output y = x̂·γ + β (no β: 0; no
// γ: 1; zero-centred: the stored value + 1), and everything else as above. Where γ = 0, x̂ is
// (x − mean)·rstd when x is given; without x it is unknown: that column's dx and dγ are NaN,
// and its g·x̂ counts as 0 in the row sums (g = dy·0 there), so the other columns are exact.
#pragma once
#include <cstdint>
#include <vector>

#include "normjit/norm_problem.hpp"

namespace normjit::test {

struct NormInputs;

// The gate's function and its derivative, in double.
double silu(double z);
double silu_grad(double z);

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
  Gate gate = Gate::None;             // RMSNorm only
  const double* z = nullptr;          // [m, n] with a gate
  const double* dy1 = nullptr;        // [m, n]: a second norm of x (parallel), with has_bias as the first's
  const double* weight1 = nullptr;    // [n] its γ, given exactly when weight is
  const double* y = nullptr;          // [m, n]: recompute x̂ from this output; x is then the γ = 0 fallback, or null
  const double* bias = nullptr;       // [n] β with y, when has_bias
};

struct ReferenceGrads {
  std::vector<double> dx;       // [m, n]
  std::vector<double> dweight;  // [n] when there is γ, else empty
  std::vector<double> dbias;    // [n] when has_bias, else empty
  std::vector<double> dresidual_in;  // [m, n] dh, when rowscale or keep is given, else empty
  std::vector<double> dz;            // [m, n] with a gate, else empty
  std::vector<double> dweight1, dbias1;  // [n] with dy1, when there are γ / β
  // The 2-norms of the terms each result is built from (finite terms only): rstd·g for dx,
  // dy·x̂ for dγ, dy for dβ. A result much smaller than its terms is the product of
  // cancellation, and no floating-point kernel can give it to full relative accuracy; the
  // comparisons use these as the floor of the error's denominator (see compare.h).
  double dx_term_norm = 0;
  double dweight_term_norm = 0;
  double dbias_term_norm = 0;
  double dresidual_in_term_norm = 0;  // rstd·g and dresidual, before the branch's scale
  double dz_term_norm = 0;            // dz's products (before the norm: rstd·g·x·silu'(z))
  double dweight1_term_norm = 0, dbias1_term_norm = 0;  // dy1·x̂, dy1
};

ReferenceGrads reference_backward(const ReferenceProblem& problem);

// The float64 reference of the forward (docs/FORWARD.md), on contiguous [m, n] double rows:
//   mean = Σx/N, var = Σ(x − mean)²/N (biased), rstd = 1/sqrt(var + eps)
//   RMSNorm: mean = 0, rstd = 1/sqrt(Σx²/N + eps)
//   y = (x − mean)·rstd·γ + β   (no γ: 1; zero-centred: the stored value + 1; no β: 0)
struct ForwardReference {
  std::vector<double> y;     // [m, n]
  std::vector<double> mean;  // [m] (zeros for RMSNorm)
  std::vector<double> rstd;  // [m]
  double y_term_norm = 0;    // 2-norm of the terms y is summed from: x̂·γ and β (see compare.h)
};
ForwardReference reference_forward(NormKind kind, int64_t m, int64_t n, const double* x, const double* weight,
                                   const double* bias, bool zero_centered_weight, double eps);
// The stored inputs (rounded x, dy, γ; fp32 statistics) widened to double.
ReferenceGrads reference_backward(const NormInputs& inputs);

}  // namespace normjit::test
