// The float64 reference's gated RMSNorm (docs/FUSED.md), on the CPU: its dx, dγ and dz agree
// with central finite differences of the gated forward in both orders, alone and composed with
// the residual gradient and zero-centred γ; and the inputs drawn for a gated case are what the
// GPU tests assume (z in x's dtype with its stride; rstd of x·silu(z) when gated before the norm).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "support/finite_difference.h"
#include "support/norm_inputs.h"
#include "support/problem_variants.h"
#include "support/random.h"
#include "support/reference.h"

namespace normjit::test {
namespace {

// The gated forward in double, and the loss L = Σ y·dy + Σ x·dres (dres: the residual
// stream's gradient of the kernel's x, zero when the case has none):
//   after the norm:  y = x̂(x)·(w + shift)·silu(z)
//   before the norm: y = x̂(x·silu(z))·(w + shift)
// with x̂(v) = v·rstd(v), rstd(v) = 1/sqrt(mean(v²) + eps), row by row.
struct GatedForward {
  Gate gate;
  int64_t m, n;
  std::vector<double> x, z, weight, dy, dres;
  double shift = 0;

  double norm_input(int64_t r, int64_t c) const {
    const size_t i = static_cast<size_t>(r * n + c);
    return gate == Gate::BeforeNorm ? x[i] * silu(z[i]) : x[i];
  }
  void stats(std::vector<double>* mean, std::vector<double>* rstd) const {
    std::vector<double> rows(static_cast<size_t>(m * n));
    for (int64_t r = 0; r < m; ++r)
      for (int64_t c = 0; c < n; ++c) rows[r * n + c] = norm_input(r, c);
    row_statistics(NormKind::RMSNorm, rows.data(), m, n, mean, rstd);
  }
  double loss() const {
    std::vector<double> mean, rstd;
    stats(&mean, &rstd);
    double total = 0;
    for (int64_t r = 0; r < m; ++r)
      for (int64_t c = 0; c < n; ++c) {
        const size_t i = static_cast<size_t>(r * n + c);
        const double gate_out = gate == Gate::AfterNorm ? silu(z[i]) : 1.0;
        const double y = norm_input(r, c) * rstd[r] * (weight[c] + shift) * gate_out;
        total += y * dy[i] + x[i] * dres[i];
      }
    return total;
  }
};

TEST(ReferenceGated, AgreesWithFiniteDifferencesOfTheGatedForward) {
  constexpr int64_t m = 3;
  for (Gate gate : {Gate::AfterNorm, Gate::BeforeNorm})
    for (bool composed : {false, true})  // with dresidual and zero-centred γ
      for (int64_t n : {1, 5, 17}) {
        const uint64_t seed = fresh_seed();
        SCOPED_TRACE(std::string("gate ") + (gate == Gate::AfterNorm ? "after" : "before") +
                     (composed ? " +residual +zero-centred" : "") + " N=" + std::to_string(n) + " seed=" +
                     std::to_string(seed) + " (replay: NORMJIT_TEST_SEED=" + std::to_string(seed) + ")");
        Rng rng(seed, 778);
        GatedForward f{gate, m, n};
        for (int64_t i = 0; i < m * n; ++i) {
          f.x.push_back(rng.normal());
          f.z.push_back(2.0 * rng.normal());  // both regimes of silu: ≈ 0 and ≈ z
          f.dy.push_back(rng.normal());
          f.dres.push_back(composed ? rng.normal() : 0.0);
        }
        for (int64_t c = 0; c < n; ++c) f.weight.push_back((composed ? 0.0 : 1.0) + 0.25 * rng.normal());
        f.shift = composed ? 1.0 : 0.0;

        std::vector<double> mean, rstd;
        f.stats(&mean, &rstd);
        ReferenceProblem p;
        p.kind = NormKind::RMSNorm;
        p.m = m;
        p.n = n;
        p.x = f.x.data();
        p.dy = f.dy.data();
        p.rstd = rstd.data();
        p.weight = f.weight.data();
        p.zero_centered_weight = composed;
        if (composed) p.dresidual = f.dres.data();
        p.gate = gate;
        p.z = f.z.data();
        const ReferenceGrads ref = reference_backward(p);
        const auto loss = [&f] { return f.loss(); };

        EXPECT_LE(gradient_error(&f.x, loss, ref.dx, ref.dx_term_norm), kFiniteDifferenceTolerance) << "dx";
        EXPECT_LE(gradient_error(&f.weight, loss, ref.dweight, ref.dweight_term_norm), kFiniteDifferenceTolerance)
            << "dweight";
        EXPECT_LE(gradient_error(&f.z, loss, ref.dz, ref.dz_term_norm), kFiniteDifferenceTolerance) << "dz";
      }
}

// The gated inputs: z in x's dtype with the stride asked for, and the saved rstd of a
// gate-before-norm case computed from x·silu(z) (as stored), not from x.
TEST(ReferenceGated, GatedInputsAreDrawnAsDescribed) {
  NormProblem problem = make_problem(NormKind::RMSNorm, 257, DType::BF16, DType::F32, Affine::WeightOnly);
  problem.gate = Gate::BeforeNorm;
  FusedSpec spec;
  spec.z_stride = 264;
  spec.dz_stride = 300;
  const NormInputs in = make_inputs(problem, 64, fresh_seed(), {}, spec);
  EXPECT_EQ(in.fused.z.dtype(), DType::BF16);
  EXPECT_EQ(in.fused.z.stride(), 264);
  EXPECT_EQ(in.fused.dz_stride, 300);
  int64_t gate_near_zero = 0, gate_near_z = 0;
  for (int64_t r = 0; r < in.m; ++r) {
    std::vector<double> gated, mean, rstd;
    for (int64_t c = 0; c < in.n(); ++c) {
      const double z = in.fused.z.get(r, c);
      gated.push_back(in.x.get(r, c) * silu(z));
      gate_near_zero += std::fabs(silu(z)) < 0.05;
      gate_near_z += z > 3 && std::fabs(silu(z) - z) < 0.2;
    }
    row_statistics(NormKind::RMSNorm, gated.data(), 1, in.n(), &mean, &rstd);
    EXPECT_FLOAT_EQ(in.rstd[r], static_cast<float>(rstd[0])) << "row " << r;
  }
  EXPECT_GT(gate_near_zero, 0);
  EXPECT_GT(gate_near_z, 0);
}

}  // namespace
}  // namespace normjit::test
