// The float64 reference's fused options (docs/FUSED.md), on the CPU: its gradients agree with
// central finite differences of the fused forward, and its parts satisfy the identities the
// options are defined by.
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

// The fused forward in double, with every option present (an option off is its neutral value):
//   h = x_in·keep/(1 − p)·rowscale[row] + residual,   y = x̂(h)·(w + shift) + β
// and the loss L = Σ y·dy + Σ h·dres: dres is the gradient the residual stream brings to h,
// so dL/dh is the norm's backward plus dres — the kernel's dh.
struct FusedForward {
  NormKind kind;
  int64_t m, n;
  std::vector<double> x_in, residual, rowscale, keep, weight, beta, dy, dres;
  double p = 0;
  double shift = 0;  // 1 when γ is stored zero-centred

  double h(int64_t r, int64_t c) const {
    return x_in[r * n + c] * keep[r * n + c] / (1 - p) * rowscale[r] + residual[r * n + c];
  }
  void stats(std::vector<double>* mean, std::vector<double>* rstd) const {
    std::vector<double> rows(static_cast<size_t>(m * n));
    for (int64_t r = 0; r < m; ++r)
      for (int64_t c = 0; c < n; ++c) rows[r * n + c] = h(r, c);
    row_statistics(kind, rows.data(), m, n, mean, rstd);
  }

  double loss() const {
    std::vector<double> mean, rstd;
    stats(&mean, &rstd);
    double total = 0;
    for (int64_t r = 0; r < m; ++r)
      for (int64_t c = 0; c < n; ++c) {
        const double y = (h(r, c) - mean[r]) * rstd[r] * (weight[c] + shift) + beta[c];
        total += y * dy[r * n + c] + h(r, c) * dres[r * n + c];
      }
    return total;
  }
};

struct FusedCase {
  const char* name;
  bool residual, zero_centered, rowscale, dropout;
};

const FusedCase kCases[] = {
    {"residual", true, false, false, false},      {"zero_centered_weight", false, true, false, false},
    {"rowscale", false, false, true, false},      {"dropout", false, false, false, true},
    {"rowscale_and_dropout", false, false, true, true}, {"all", true, true, true, true},
};

TEST(ReferenceFused, AgreesWithFiniteDifferencesOfTheFusedForward) {
  constexpr int64_t m = 3;
  for (const FusedCase& fc : kCases)
    for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm})
      for (int64_t n : {1, 5, 17}) {
        const uint64_t seed = fresh_seed();
        SCOPED_TRACE(std::string(fc.name) + " " + kind_label(kind) + " N=" + std::to_string(n) +
                     " seed=" + std::to_string(seed) + " (replay: NORMJIT_TEST_SEED=" + std::to_string(seed) + ")");
        Rng rng(seed, 777);
        FusedForward f{kind, m, n};
        const int64_t mn = m * n;
        for (int64_t i = 0; i < mn; ++i) {
          f.x_in.push_back(rng.normal());
          f.residual.push_back(fc.residual ? rng.normal() : 0.0);
          f.keep.push_back(fc.dropout && rng.uniform() < 0.3 ? 0.0 : 1.0);
          f.dy.push_back(rng.normal());
          f.dres.push_back(fc.residual ? rng.normal() : 0.0);
        }
        for (int64_t r = 0; r < m; ++r) f.rowscale.push_back(fc.rowscale ? rng.uniform(0.5, 2.0) : 1.0);
        for (int64_t c = 0; c < n; ++c) {
          f.weight.push_back((fc.zero_centered ? 0.0 : 1.0) + 0.25 * rng.normal());
          f.beta.push_back(kind == NormKind::LayerNorm ? rng.normal() : 0.0);
        }
        f.p = fc.dropout ? 0.3 : 0.0;
        f.shift = fc.zero_centered ? 1.0 : 0.0;

        std::vector<double> h(mn), mean, rstd;
        for (int64_t r = 0; r < m; ++r)
          for (int64_t c = 0; c < n; ++c) h[r * n + c] = f.h(r, c);
        f.stats(&mean, &rstd);
        ReferenceProblem p;
        p.kind = kind;
        p.m = m;
        p.n = n;
        p.x = h.data();
        p.dy = f.dy.data();
        p.mean = kind == NormKind::LayerNorm ? mean.data() : nullptr;
        p.rstd = rstd.data();
        p.weight = f.weight.data();
        p.has_bias = kind == NormKind::LayerNorm;
        p.zero_centered_weight = fc.zero_centered;
        if (fc.residual) p.dresidual = f.dres.data();
        if (fc.rowscale) p.rowscale = f.rowscale.data();
        if (fc.dropout) {
          p.keep = f.keep.data();
          p.dropout_p = f.p;
        }
        const ReferenceGrads ref = reference_backward(p);
        const auto loss = [&f] { return f.loss(); };

        EXPECT_LE(gradient_error(&f.x_in, loss, ref.dx, ref.dx_term_norm), kFiniteDifferenceTolerance)
            << "dx (= dL/dx_in)";
        EXPECT_LE(gradient_error(&f.weight, loss, ref.dweight, ref.dweight_term_norm), kFiniteDifferenceTolerance)
            << "dweight (= dL/d stored weight)";
        // dh is dL/dresidual: the residual branch's gradient.
        const std::vector<double>& dh = (fc.rowscale || fc.dropout) ? ref.dresidual_in : ref.dx;
        EXPECT_LE(gradient_error(&f.residual, loss, dh, ref.dresidual_in_term_norm + ref.dx_term_norm),
                  kFiniteDifferenceTolerance)
            << "dh (= dL/dresidual)";
        EXPECT_EQ(ref.dresidual_in.empty(), !(fc.rowscale || fc.dropout));
      }
}

// The identities the options are defined by, element for element.
TEST(ReferenceFused, OptionsAreTheirDefiningIdentities) {
  NormProblem problem = make_problem(NormKind::LayerNorm, 33, DType::F32, DType::F32, Affine::WeightAndBias);
  const NormInputs plain = make_inputs(problem, 5, fresh_seed());
  const ReferenceGrads base = reference_backward(plain);

  // Zero-centred γ: the stored weight w with the option is γ = w + 1 without it (in double:
  // an fp32 weight tensor would round w − 1).
  std::vector<double> x, dy, mean(plain.mean.begin(), plain.mean.end()), rstd(plain.rstd.begin(), plain.rstd.end());
  std::vector<double> gamma, stored;
  for (int64_t r = 0; r < plain.m; ++r)
    for (int64_t c = 0; c < plain.n(); ++c) {
      x.push_back(plain.x.get(r, c));
      dy.push_back(plain.dy.get(r, c));
    }
  for (int64_t c = 0; c < plain.n(); ++c) {
    gamma.push_back(plain.weight.get(0, c));
    stored.push_back(gamma.back() - 1.0);
  }
  ReferenceProblem rp;
  rp.kind = NormKind::LayerNorm;
  rp.m = plain.m;
  rp.n = plain.n();
  rp.x = x.data();
  rp.dy = dy.data();
  rp.mean = mean.data();
  rp.rstd = rstd.data();
  rp.weight = gamma.data();
  const ReferenceGrads with_gamma = reference_backward(rp);
  rp.weight = stored.data();
  rp.zero_centered_weight = true;
  const ReferenceGrads zc = reference_backward(rp);
  for (size_t i = 0; i < with_gamma.dx.size(); ++i)
    EXPECT_NEAR(zc.dx[i], with_gamma.dx[i], 1e-12 * (1 + std::fabs(with_gamma.dx[i])));
  EXPECT_EQ(zc.dweight, with_gamma.dweight);  // dγ = Σ dy·x̂ either way

  // Residual, row scale and dropout: dh = dx + dresidual; dx_in = dh·rowscale·keep/(1 − p).
  problem.residual = problem.rowscale = true;
  problem.dropout = DropoutMask::Bits;
  NormInputs fused = make_inputs(problem, 5, plain.seed, {}, FusedSpec{0.5, true, 0});
  fused.x = plain.x;
  fused.dy = plain.dy;
  fused.weight = plain.weight;
  fused.mean = plain.mean;
  fused.rstd = plain.rstd;
  const ReferenceGrads all = reference_backward(fused);
  int dropped = 0;
  for (int64_t r = 0; r < fused.m; ++r)
    for (int64_t c = 0; c < fused.n(); ++c) {
      const size_t i = static_cast<size_t>(r * fused.n() + c);
      const double dh = base.dx[i] + fused.fused.dresidual.get(r, c);
      EXPECT_NEAR(all.dresidual_in[i], dh, 1e-12 * (1 + std::fabs(dh)));
      const bool kept = fused.fused.kept(DropoutMask::Bits, r, c);
      dropped += !kept;
      EXPECT_NEAR(all.dx[i], kept ? dh * fused.fused.rowscale[r] * 2.0 : 0.0, 1e-12 * (1 + std::fabs(dh)));
    }
  EXPECT_GT(dropped, 0);
  EXPECT_EQ(all.dweight, base.dweight);
}

// The bit-packed mask: bit j of byte k of a row is element 8k + j; a byte mask keeps nonzero bytes.
TEST(ReferenceFused, MaskFormsReadAsDocumented) {
  FusedInputs f;
  f.keep_mask = {0x05, 0x80, 0x00, 0x00, 0x02, 0x00};  // two rows of 3 bytes
  f.keep_mask_stride = 3;
  EXPECT_TRUE(f.kept(DropoutMask::Bits, 0, 0));
  EXPECT_FALSE(f.kept(DropoutMask::Bits, 0, 1));
  EXPECT_TRUE(f.kept(DropoutMask::Bits, 0, 2));
  EXPECT_TRUE(f.kept(DropoutMask::Bits, 0, 15));
  EXPECT_FALSE(f.kept(DropoutMask::Bits, 0, 14));
  EXPECT_TRUE(f.kept(DropoutMask::Bits, 1, 9));
  EXPECT_TRUE(f.kept(DropoutMask::Bytes, 0, 1));
  EXPECT_FALSE(f.kept(DropoutMask::Bytes, 0, 2));
  EXPECT_TRUE(f.kept(DropoutMask::Bytes, 1, 1));
}

// Inputs drawn for a fused problem: a mask keeps about 1 − p, kept bytes are nonzero values
// other than 1 too, and dresidual is there in dx's dtype.
TEST(ReferenceFused, FusedInputsAreDrawnAsDescribed) {
  NormProblem problem = make_problem(NormKind::RMSNorm, 4096, DType::BF16, DType::F32, Affine::WeightOnly);
  problem.residual = true;
  problem.dropout = DropoutMask::Bytes;
  const NormInputs in = make_inputs(problem, 8, fresh_seed(), {}, FusedSpec{0.5, true, 4100});
  EXPECT_EQ(in.fused.dresidual.dtype(), DType::BF16);
  EXPECT_EQ(in.fused.dresidual.stride(), 4100);
  int64_t kept = 0, above_one = 0;
  for (int64_t r = 0; r < in.m; ++r)
    for (int64_t c = 0; c < in.n(); ++c) {
      kept += in.fused.kept(DropoutMask::Bytes, r, c);
      above_one += in.fused.keep_mask[r * in.fused.keep_mask_stride + c] > 1;
    }
  EXPECT_NEAR(static_cast<double>(kept) / (in.m * in.n()), 0.5, 0.03);
  EXPECT_GT(above_one, 0);
  EXPECT_TRUE(in.fused.dresidual_in);  // dropout is on
}

}  // namespace
}  // namespace normjit::test
