// The forward's float64 reference on the CPU: known values, the statistics the backward's
// tests save, and the chain forward → backward against finite differences of the forward
// itself (the backward reference fed the forward reference's mean and rstd).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "support/finite_difference.h"
#include "support/norm_inputs.h"
#include "support/random.h"
#include "support/reference.h"

namespace normjit::test {
namespace {

TEST(ReferenceForward, KnownValues) {
  const std::vector<double> x = {1, 2, 3, 4};
  const std::vector<double> gamma = {1, 2, 0.5, -1}, beta = {0, 1, 2, 3};
  const ForwardReference ln = reference_forward(NormKind::LayerNorm, 1, 4, x.data(), gamma.data(), beta.data(),
                                                false, 1e-5);
  EXPECT_DOUBLE_EQ(ln.mean[0], 2.5);
  const double rstd = 1 / std::sqrt(1.25 + 1e-5);  // var = (2.25 + 0.25 + 0.25 + 2.25) / 4
  EXPECT_DOUBLE_EQ(ln.rstd[0], rstd);
  EXPECT_DOUBLE_EQ(ln.y[0], -1.5 * rstd);
  EXPECT_DOUBLE_EQ(ln.y[1], -0.5 * rstd * 2 + 1);
  EXPECT_DOUBLE_EQ(ln.y[3], -(1.5 * rstd) + 3);
  const ForwardReference rms = reference_forward(NormKind::RMSNorm, 1, 4, x.data(), gamma.data(), nullptr, true, 0);
  EXPECT_DOUBLE_EQ(rms.mean[0], 0);
  EXPECT_DOUBLE_EQ(rms.rstd[0], 1 / std::sqrt(7.5));  // (1 + 4 + 9 + 16) / 4
  EXPECT_DOUBLE_EQ(rms.y[2], 3 / std::sqrt(7.5) * 1.5);  // zero-centred: γ = 0.5 + 1
  const ForwardReference plain = reference_forward(NormKind::RMSNorm, 1, 4, x.data(), nullptr, nullptr, false, 0);
  EXPECT_DOUBLE_EQ(plain.y[3], 4 / std::sqrt(7.5));
}

TEST(ReferenceForward, StatisticsAreThoseTheBackwardTestsSave) {
  for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm}) {
    NormProblem p;
    p.kind = kind;
    p.n = 77;
    p.x_dtype = DType::F32;
    p.has_bias = false;
    const NormInputs in = make_inputs(p, 5, fresh_seed());
    std::vector<double> x;
    for (int64_t r = 0; r < in.m; ++r)
      for (int64_t c = 0; c < p.n; ++c) x.push_back(in.x.get(r, c));
    const ForwardReference ref = reference_forward(kind, in.m, p.n, x.data(), nullptr, nullptr, false, kNormEps);
    std::vector<double> mean, rstd;
    row_statistics(kind, x.data(), in.m, p.n, &mean, &rstd);
    for (int64_t r = 0; r < in.m; ++r) {
      EXPECT_DOUBLE_EQ(ref.mean[r], mean[r]);
      EXPECT_DOUBLE_EQ(ref.rstd[r], rstd[r]);
    }
  }
}

// L = Σ y·dy with y from reference_forward: its finite-difference gradient in x, γ and β is
// what reference_backward gives from the forward reference's statistics.
TEST(ReferenceForward, FeedsTheBackwardReferenceConsistently) {
  constexpr int64_t m = 3;
  for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm})
    for (bool zero_centered : {false, true})
      for (int64_t n : {2, 5, 17}) {
        const uint64_t seed = fresh_seed();
        SCOPED_TRACE(std::string(kind == NormKind::LayerNorm ? "LayerNorm" : "RMSNorm") + " N=" + std::to_string(n) +
                     (zero_centered ? " zero-centred" : "") + " seed=" + std::to_string(seed));
        Rng rng(seed);
        std::vector<double> x(m * n), dy(m * n), gamma(n), beta(n);
        for (int64_t r = 0; r < m; ++r) {
          const double scale = 0.5 + 2 * rng.uniform(), offset = rng.normal();
          for (int64_t c = 0; c < n; ++c) x[r * n + c] = offset + scale * rng.normal();
        }
        for (double& v : dy) v = rng.normal();
        for (double& v : gamma) v = (zero_centered ? 0.0 : 1.0) + rng.normal() / 4;
        for (double& v : beta) v = rng.normal() / 2;
        const bool layer_norm = kind == NormKind::LayerNorm;
        const double* bias = layer_norm ? beta.data() : nullptr;
        auto loss = [&] {
          const ForwardReference f =
              reference_forward(kind, m, n, x.data(), gamma.data(), bias, zero_centered, kNormEps);
          double total = 0;
          for (int64_t i = 0; i < m * n; ++i) total += f.y[i] * dy[i];
          return total;
        };
        const ForwardReference f = reference_forward(kind, m, n, x.data(), gamma.data(), bias, zero_centered, kNormEps);
        ReferenceProblem p;
        p.kind = kind;
        p.m = m;
        p.n = n;
        p.x = x.data();
        p.dy = dy.data();
        p.mean = layer_norm ? f.mean.data() : nullptr;
        p.rstd = f.rstd.data();
        p.weight = gamma.data();
        p.zero_centered_weight = zero_centered;
        p.has_bias = layer_norm;
        const ReferenceGrads ref = reference_backward(p);
        EXPECT_LE(gradient_error(&x, loss, ref.dx, ref.dx_term_norm), kFiniteDifferenceTolerance) << "dx";
        EXPECT_LE(gradient_error(&gamma, loss, ref.dweight, ref.dweight_term_norm), kFiniteDifferenceTolerance)
            << "dweight";
        if (layer_norm)
          EXPECT_LE(gradient_error(&beta, loss, ref.dbias, ref.dbias_term_norm), kFiniteDifferenceTolerance) << "dbias";
      }
}

}  // namespace
}  // namespace normjit::test
