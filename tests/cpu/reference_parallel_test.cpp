// The float64 reference's parallel norms of one input (docs/FUSED.md), on the CPU: dx, dγ, dγ1
// and dβ1 agree with central finite differences of the two norms' forward, LayerNorm and
// RMSNorm, with γ stored plainly or zero-centred.
#include <gtest/gtest.h>

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

// y0 = x̂·(w0 + shift) + β0 and y1 = x̂·(w1 + shift) + β1 of the same x̂, and the loss
// L = Σ y0·dy0 + Σ y1·dy1.
struct ParallelForward {
  NormKind kind;
  int64_t m, n;
  std::vector<double> x, dy0, dy1, w0, w1, b0, b1;
  double shift = 0;

  double loss() const {
    std::vector<double> mean, rstd;
    row_statistics(kind, x.data(), m, n, &mean, &rstd);
    double total = 0;
    for (int64_t r = 0; r < m; ++r)
      for (int64_t c = 0; c < n; ++c) {
        const size_t i = static_cast<size_t>(r * n + c);
        const double xhat = (x[i] - mean[r]) * rstd[r];
        total += (xhat * (w0[c] + shift) + b0[c]) * dy0[i] + (xhat * (w1[c] + shift) + b1[c]) * dy1[i];
      }
    return total;
  }
};

TEST(ReferenceParallel, AgreesWithFiniteDifferencesOfBothNorms) {
  constexpr int64_t m = 3;
  for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm})
    for (bool zero_centered : {false, true})
      for (int64_t n : {1, 5, 17}) {
        const uint64_t seed = fresh_seed();
        SCOPED_TRACE(std::string(kind_label(kind)) + (zero_centered ? " zero-centred" : "") + " N=" +
                     std::to_string(n) + " seed=" + std::to_string(seed) +
                     " (replay: NORMJIT_TEST_SEED=" + std::to_string(seed) + ")");
        Rng rng(seed, 779);
        ParallelForward f{kind, m, n};
        for (int64_t i = 0; i < m * n; ++i) {
          f.x.push_back(rng.normal());
          f.dy0.push_back(rng.normal());
          f.dy1.push_back(rng.normal());
        }
        const bool bias = kind == NormKind::LayerNorm;
        for (int64_t c = 0; c < n; ++c) {
          f.w0.push_back((zero_centered ? 0.0 : 1.0) + 0.25 * rng.normal());
          f.w1.push_back((zero_centered ? 0.0 : 1.0) + 0.25 * rng.normal());
          f.b0.push_back(bias ? rng.normal() : 0.0);
          f.b1.push_back(bias ? rng.normal() : 0.0);
        }
        f.shift = zero_centered ? 1.0 : 0.0;

        std::vector<double> mean, rstd;
        row_statistics(kind, f.x.data(), m, n, &mean, &rstd);
        ReferenceProblem p;
        p.kind = kind;
        p.m = m;
        p.n = n;
        p.x = f.x.data();
        p.dy = f.dy0.data();
        p.mean = bias ? mean.data() : nullptr;
        p.rstd = rstd.data();
        p.weight = f.w0.data();
        p.has_bias = bias;
        p.zero_centered_weight = zero_centered;
        p.dy1 = f.dy1.data();
        p.weight1 = f.w1.data();
        const ReferenceGrads ref = reference_backward(p);
        const auto loss = [&f] { return f.loss(); };

        EXPECT_LE(gradient_error(&f.x, loss, ref.dx, ref.dx_term_norm), kFiniteDifferenceTolerance) << "dx";
        EXPECT_LE(gradient_error(&f.w0, loss, ref.dweight, ref.dweight_term_norm), kFiniteDifferenceTolerance)
            << "dweight";
        EXPECT_LE(gradient_error(&f.w1, loss, ref.dweight1, ref.dweight1_term_norm), kFiniteDifferenceTolerance)
            << "dweight1";
        if (bias) {
          EXPECT_LE(gradient_error(&f.b0, loss, ref.dbias, ref.dbias_term_norm), kFiniteDifferenceTolerance)
              << "dbias";
          EXPECT_LE(gradient_error(&f.b1, loss, ref.dbias1, ref.dbias1_term_norm), kFiniteDifferenceTolerance)
              << "dbias1";
        } else {
          EXPECT_TRUE(ref.dbias1.empty());
        }
      }
}

// The inputs drawn for parallel norms: dy1 in dy's dtype with its stride, γ1 unlike γ.
TEST(ReferenceParallel, SecondNormInputsAreDrawnAsDescribed) {
  NormProblem problem = make_problem(NormKind::LayerNorm, 100, DType::BF16, DType::F32, Affine::WeightAndBias);
  problem.parallel = true;
  FusedSpec spec;
  spec.dy1_stride = 104;
  const NormInputs in = make_inputs(problem, 3, fresh_seed(), {}, spec);
  EXPECT_EQ(in.fused.dy1.dtype(), DType::BF16);
  EXPECT_EQ(in.fused.dy1.stride(), 104);
  ASSERT_EQ(in.fused.weight1.cols(), 100);
  EXPECT_EQ(in.fused.weight1.dtype(), DType::F32);
  int differ = 0;
  for (int64_t c = 0; c < 100; ++c) differ += in.fused.weight1.get(0, c) != in.weight.get(0, c);
  EXPECT_GT(differ, 90);
}

}  // namespace
}  // namespace normjit::test
