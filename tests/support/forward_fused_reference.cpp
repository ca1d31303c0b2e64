#include "support/forward_fused_reference.h"

#include <cmath>

#include "support/host_tensor.h"

#define NJ_HOST_DEVICE inline
#include "templates/philox.cuh"
#undef NJ_HOST_DEVICE

namespace normjit::test {
bool reference_kept(uint64_t seed, uint64_t offset, int64_t row, int64_t col, double p) {
  const double drop_below = std::floor(p * 4294967296.0);
  const nj::Philox4 draws =
      nj::dropout_draws(seed, offset, static_cast<unsigned long long>(row), static_cast<unsigned long long>(col / 4));
  return static_cast<double>(draws.w[col % 4]) >= drop_below;
}

ForwardFusedReference reference_forward_fused(const ForwardFusedInputs& in) {
  const NormProblem& p = in.problem;
  const int64_t m = in.m, n = p.n;
  const bool dropout = p.dropout != DropoutMask::None;
  ForwardFusedReference out;
  out.h.resize(static_cast<size_t>(m * n));
  out.keep.assign(static_cast<size_t>(m * n), 1);
  std::vector<double> normalised(static_cast<size_t>(m * n));
  for (int64_t r = 0; r < m; ++r)
    for (int64_t c = 0; c < n; ++c) {
      const size_t i = static_cast<size_t>(r * n + c);
      // h as the kernel forms it: fp32 operations in this order, each rounded, then x's dtype.
      float h = static_cast<float>(in.x[i]);
      if (dropout) {
        out.keep[i] = reference_kept(in.seed, in.offset, r, c, in.dropout_p) ? 1 : 0;
        h *= out.keep[i] ? static_cast<float>(1.0 / (1.0 - in.dropout_p)) : 0.f;
      }
      if (p.rowscale) h *= static_cast<float>(in.rowscale[r]);
      if (p.residual) h += static_cast<float>(in.residual[i]);
      out.h[i] = dropout || p.rowscale || p.residual ? round_to(p.x_dtype, h) : in.x[i];
      normalised[i] = p.gate == Gate::BeforeNorm ? out.h[i] * silu(in.z[i]) : out.h[i];
    }
  out.norm = reference_forward(p.kind, m, n, normalised.data(), in.weight, in.bias, p.zero_centered_weight, in.eps);
  if (p.gate == Gate::AfterNorm) {
    double terms = 0;
    for (size_t i = 0; i < out.norm.y.size(); ++i) {
      out.norm.y[i] *= silu(in.z[i]);
      if (std::isfinite(out.norm.y[i])) terms += out.norm.y[i] * out.norm.y[i];
    }
    out.norm.y_term_norm = std::sqrt(terms);
  }
  if (p.parallel)
    out.second = reference_forward(p.kind, m, n, normalised.data(), in.weight1, in.bias1, p.zero_centered_weight, in.eps);
  return out;
}

}  // namespace normjit::test
