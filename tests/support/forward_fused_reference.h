// The float64 reference of the forward with fused options (docs/FORWARD.md, "Fused options"),
// from the inputs as stored (widened to double, contiguous [m, n]):
//   keep = draw(seed, offset, row, col) >= p·2^32 (templates/philox.cuh, here as host C++)
//   h    = x·keep/(1 − p)·rowscale[row] + residual, each step an fp32 operation, then rounded
//          to x's dtype: bit for bit what the kernel forms
//   y    = reference_forward(h) (gate before the norm: of h·silu(z); after it: y·silu(z))
//   y1   = reference_forward(h) with γ1, β1 (parallel norms)
#pragma once
#include <cstdint>
#include <vector>

#include "normjit/norm_problem.hpp"
#include "support/reference.h"

namespace normjit::test {

struct ForwardFusedInputs {
  NormProblem problem;  // resolved (concrete dtypes)
  int64_t m = 0;
  const double* x = nullptr;         // [m, n]
  const double* residual = nullptr;  // [m, n] with residual
  const double* rowscale = nullptr;  // [m] with rowscale
  const double* z = nullptr;         // [m, n] with a gate
  const double* weight = nullptr;    // [n] or null
  const double* bias = nullptr;
  const double* weight1 = nullptr;   // parallel
  const double* bias1 = nullptr;
  double dropout_p = 0;
  uint64_t seed = 0, offset = 0;
  double eps = 1e-5;
};

struct ForwardFusedReference {
  std::vector<double> h;              // [m, n]: the pre-norm sum as stored in x's dtype (exact)
  std::vector<unsigned char> keep;    // [m, n]: 1 where the element is kept (all 1 without dropout)
  ForwardReference norm;              // y (gated after the norm when asked), mean, rstd
  ForwardReference second;            // y1 (parallel); empty otherwise
};

ForwardFusedReference reference_forward_fused(const ForwardFusedInputs& in);

// Whether element (row, col) is kept: its Philox draw is at least floor(p·2^32).
bool reference_kept(uint64_t seed, uint64_t offset, int64_t row, int64_t col, double p);

}  // namespace normjit::test
