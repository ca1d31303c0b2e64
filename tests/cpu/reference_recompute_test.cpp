// The float64 reference's recompute-from-output mode (docs/FUSED.md), on the CPU: x̂ recovered
// from the exact forward output y = x̂·γ + β gives the gradients the x-based reference gives, in
// every affine form and with the other options; where γ = 0 it takes x when given (the same
// gradients again) and otherwise makes exactly those columns' dx and dγ NaN, every other value
// unchanged. And the inputs drawn for it: y and β as described.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "support/norm_inputs.h"
#include "support/problem_variants.h"
#include "support/random.h"
#include "support/reference.h"

namespace normjit::test {
namespace {

// The 2-norm difference of two equally long vectors over the elements finite in both, relative to
// the second's norm or, where that cancelled to far below the terms it is summed from, to those
// terms' norm (as support/compare.h judges the kernels); and whether they are finite in the same
// places.
struct Agreement {
  double error = 0;
  bool same_finiteness = true;
};

Agreement agreement(const std::vector<double>& a, const std::vector<double>& b, double term_norm = 0) {
  Agreement out;
  if (a.size() != b.size()) {
    out.same_finiteness = false;
    return out;
  }
  double diff = 0, norm = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isfinite(a[i]) != std::isfinite(b[i])) out.same_finiteness = false;
    if (!std::isfinite(a[i]) || !std::isfinite(b[i])) continue;
    diff += (a[i] - b[i]) * (a[i] - b[i]);
    norm += b[i] * b[i];
  }
  const double scale = std::max(std::sqrt(norm), term_norm);
  out.error = scale > 0 ? std::sqrt(diff) / scale : std::sqrt(diff);
  return out;
}

// One problem's inputs in double, contiguous, with y = x̂·γ + β computed exactly (in double).
struct Case {
  NormKind kind;
  int64_t m, n;
  bool weight, bias, zero_centered;
  std::vector<double> x, dy, mean, rstd, gamma_stored, beta, y, dresidual, rowscale, keep;

  void draw(uint64_t seed, bool other_options) {
    Rng rng(seed, 4242);
    for (int64_t i = 0; i < m * n; ++i) {
      x.push_back(0.7 + 2.0 * rng.normal());
      dy.push_back(rng.normal());
      if (other_options) {
        dresidual.push_back(rng.normal());
        keep.push_back(rng.uniform() < 0.25 ? 0.0 : 1.0);
      }
    }
    for (int64_t r = 0; r < m; ++r) rowscale.push_back(rng.uniform(0.5, 2.0));
    for (int64_t c = 0; c < n; ++c) {
      gamma_stored.push_back((zero_centered ? 0.0 : 1.0) + 0.25 * rng.normal());
      beta.push_back(bias ? rng.normal() : 0.0);
    }
    forward();
  }

  double gamma(int64_t c) const { return weight ? gamma_stored[c] + (zero_centered ? 1.0 : 0.0) : 1.0; }

  // The statistics of x and the output y, in double.
  void forward() {
    row_statistics(kind, x.data(), m, n, &mean, &rstd);
    y.assign(static_cast<size_t>(m * n), 0.0);
    for (int64_t r = 0; r < m; ++r)
      for (int64_t c = 0; c < n; ++c)
        y[r * n + c] = (x[r * n + c] - mean[r]) * rstd[r] * gamma(c) + (bias ? beta[c] : 0.0);
  }

  // recompute: from y (with x as the fallback when with_x); otherwise the ordinary reference.
  ReferenceGrads backward(bool recompute, bool with_x, bool other_options) const {
    ReferenceProblem p;
    p.kind = kind;
    p.m = m;
    p.n = n;
    p.x = !recompute || with_x ? x.data() : nullptr;
    p.dy = dy.data();
    p.mean = kind == NormKind::LayerNorm ? mean.data() : nullptr;
    p.rstd = rstd.data();
    p.weight = weight ? gamma_stored.data() : nullptr;
    p.has_bias = bias;
    p.zero_centered_weight = zero_centered;
    if (recompute) {
      p.y = y.data();
      p.bias = bias ? beta.data() : nullptr;
    }
    if (other_options) {
      p.dresidual = dresidual.data();
      p.rowscale = rowscale.data();
      p.keep = keep.data();
      p.dropout_p = 0.25;
    }
    return reference_backward(p);
  }
};

struct AffineForm {
  const char* name;
  bool weight, bias, zero_centered;
};
const AffineForm kAffineForms[] = {{"WeightAndBias", true, true, false},
                                   {"WeightOnly", true, false, false},
                                   {"BiasOnly", false, true, false},
                                   {"None", false, false, false},
                                   {"ZeroCenteredWeightAndBias", true, true, true}};

TEST(ReferenceRecompute, FromTheExactOutputEqualsTheReferenceFromX) {
  for (const AffineForm& a : kAffineForms)
    for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm})
      for (bool others : {false, true})
        for (int64_t n : {1, 7, 64}) {
          if (kind == NormKind::RMSNorm && a.bias) continue;
          const uint64_t seed = fresh_seed();
          SCOPED_TRACE(std::string(a.name) + " " + kind_label(kind) + (others ? " +residual+rowscale+dropout" : "") +
                       " N=" + std::to_string(n) + " seed=" + std::to_string(seed) +
                       " (replay: NORMJIT_TEST_SEED=" + std::to_string(seed) + ")");
          Case c{kind, 5, n, a.weight, a.bias, a.zero_centered};
          c.draw(seed, others);
          const ReferenceGrads from_x = c.backward(false, false, others);
          const ReferenceGrads from_y = c.backward(true, false, others);
          // x̂ = (y − β)/γ in double: a few ulps of the terms, well below fp32's.
          for (const auto& [name, got, want, terms] :
               {std::tuple<const char*, const std::vector<double>&, const std::vector<double>&, double>{
                    "dx", from_y.dx, from_x.dx, from_x.dx_term_norm},
                {"dweight", from_y.dweight, from_x.dweight, from_x.dweight_term_norm},
                {"dbias", from_y.dbias, from_x.dbias, from_x.dbias_term_norm},
                {"dresidual_in", from_y.dresidual_in, from_x.dresidual_in, from_x.dresidual_in_term_norm}}) {
            const Agreement agree = agreement(got, want, terms);
            EXPECT_TRUE(agree.same_finiteness) << name;
            EXPECT_LE(agree.error, 1e-12) << name;
          }
          EXPECT_NEAR(from_y.dx_term_norm, from_x.dx_term_norm, 1e-12 * (1 + from_x.dx_term_norm));
        }
}

TEST(ReferenceRecompute, WhereGammaIsZeroXIsTheFallbackAndWithoutItOnlyThoseColumnsAreNaN) {
  constexpr int64_t m = 6, n = 40;
  const std::vector<int64_t> zero_columns = {0, 13, 39};
  for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm})
    for (bool zero_centered : {false, true})
      for (bool others : {false, true}) {
        const uint64_t seed = fresh_seed();
        SCOPED_TRACE(std::string(kind_label(kind)) + (zero_centered ? " zero-centred" : "") +
                     (others ? " +residual+rowscale+dropout" : "") + " seed=" + std::to_string(seed));
        Case c{kind, m, n, true, kind == NormKind::LayerNorm, zero_centered};
        c.draw(seed, others);
        for (int64_t col : zero_columns) c.gamma_stored[col] = zero_centered ? -1.0 : 0.0;  // γ = 0
        c.forward();
        for (int64_t col : zero_columns)
          for (int64_t r = 0; r < m; ++r) ASSERT_EQ(c.y[r * n + col], c.bias ? c.beta[col] : 0.0);
        const ReferenceGrads from_x = c.backward(false, false, others);

        // x given: the same gradients everywhere (γ = 0 columns from x itself).
        const ReferenceGrads with_x = c.backward(true, true, others);
        for (const auto& [name, got, want, terms] :
             {std::tuple<const char*, const std::vector<double>&, const std::vector<double>&, double>{
                  "dx", with_x.dx, from_x.dx, from_x.dx_term_norm},
              {"dweight", with_x.dweight, from_x.dweight, from_x.dweight_term_norm},
              {"dbias", with_x.dbias, from_x.dbias, from_x.dbias_term_norm}}) {
          const Agreement agree = agreement(got, want, terms);
          EXPECT_TRUE(agree.same_finiteness) << name << " with x";
          EXPECT_LE(agree.error, 1e-12) << name << " with x";
        }

        // Without x: exactly those columns' dx and dγ are NaN (and dh's), dβ is whole, and every
        // other element is what the x-based reference gives.
        const ReferenceGrads without_x = c.backward(true, false, others);
        auto is_zero_column = [&](int64_t col) {
          return std::find(zero_columns.begin(), zero_columns.end(), col) != zero_columns.end();
        };
        for (int64_t r = 0; r < m; ++r)
          for (int64_t col = 0; col < n; ++col) {
            const double got = without_x.dx[r * n + col], want = from_x.dx[r * n + col];
            if (is_zero_column(col)) {
              EXPECT_TRUE(std::isnan(got)) << "dx row " << r << " column " << col;
              if (others) EXPECT_TRUE(std::isnan(without_x.dresidual_in[r * n + col])) << "dh " << r << ", " << col;
            } else {
              EXPECT_NEAR(got, want, 1e-12 * (1 + from_x.dx_term_norm)) << "dx row " << r << " column " << col;
            }
          }
        for (int64_t col = 0; col < n; ++col) {
          if (is_zero_column(col)) EXPECT_TRUE(std::isnan(without_x.dweight[col])) << "dweight column " << col;
          else EXPECT_NEAR(without_x.dweight[col], from_x.dweight[col], 1e-12 * (1 + std::fabs(from_x.dweight[col])));
          if (c.bias) EXPECT_DOUBLE_EQ(without_x.dbias[col], from_x.dbias[col]) << "dbias column " << col;
        }
      }
}

// make_inputs for a recompute problem: y in x's dtype (its own stride, gaps NaN) as the stored
// x's forward output, β in the weight dtype; x given or not as the spec says.
TEST(ReferenceRecompute, InputsAreDrawnAsDescribed) {
  NormProblem problem = make_problem(NormKind::LayerNorm, 100, DType::BF16, DType::F32, Affine::WeightAndBias);
  problem.recompute_from_output = true;
  FusedSpec spec;
  spec.y_stride = 104;
  const NormInputs in = make_inputs(problem, 7, 0x5eed, {}, spec);
  EXPECT_EQ(in.fused.y.dtype(), DType::BF16);
  EXPECT_EQ(in.fused.y.stride(), 104);
  EXPECT_TRUE(std::isnan(in.fused.y.get(0, 100)));  // a gap
  EXPECT_EQ(in.fused.bias.dtype(), DType::F32);
  EXPECT_FALSE(in.fused.x_given);
  for (int64_t r = 0; r < in.m; ++r) {
    double sum = 0;
    for (int64_t c = 0; c < in.n(); ++c) sum += in.x.get(r, c);
    const double mean = sum / in.n();
    double squares = 0;
    for (int64_t c = 0; c < in.n(); ++c) squares += (in.x.get(r, c) - mean) * (in.x.get(r, c) - mean);
    const double rstd = 1.0 / std::sqrt(squares / in.n() + kNormEps);
    for (int64_t c = 0; c < in.n(); ++c) {
      const double want = (in.x.get(r, c) - mean) * rstd * in.weight.get(0, c) + in.fused.bias.get(0, c);
      EXPECT_NEAR(in.fused.y.get(r, c), want, std::fabs(want) * 0x1p-8 + 1e-30) << r << ", " << c;  // bf16 rounding
    }
  }
  spec.recompute_with_x = true;
  EXPECT_TRUE(make_inputs(problem, 7, 0x5eed, {}, spec).fused.x_given);
  // The reference from these inputs recovers x̂ from the stored (rounded) y: close to, not equal
  // to, the x-based reference (bf16 y carries 8 bits).
  NormInputs from_x = in;
  from_x.problem.recompute_from_output = false;
  const ReferenceGrads a = reference_backward(in), b = reference_backward(from_x);
  const Agreement agree = agreement(a.dx, b.dx);
  EXPECT_TRUE(agree.same_finiteness);
  EXPECT_LT(agree.error, 5e-2);
  EXPECT_GT(agree.error, 0.0);
}

}  // namespace
}  // namespace normjit::test
