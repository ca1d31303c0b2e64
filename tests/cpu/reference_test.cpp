// The test oracle itself, on the CPU: the float64 reference backward agrees with central
// finite differences of a float64 forward, the fp16/bf16 conversions round to nearest-even
// and keep NaN and Inf, and the comparison flags what it must.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "support/compare.h"
#include "support/finite_difference.h"
#include "support/float16.h"
#include "support/host_tensor.h"
#include "support/norm_inputs.h"
#include "support/problem_variants.h"
#include "support/random.h"
#include "support/reference.h"

namespace normjit::test {
namespace {

// ---- the reference against finite differences ----------------------------------------------

// A forward pass in double: statistics from x (eps = kNormEps), y = x̂·γ + β, and the loss
// L = Σ y·dy, whose gradients are exactly what the backward computes (dL/dy = dy).
struct Forward {
  NormKind kind;
  int64_t m, n;
  std::vector<double> x, dy, gamma, beta;  // gamma/beta empty when absent

  void stats(std::vector<double>* mean, std::vector<double>* rstd) const {
    row_statistics(kind, x.data(), m, n, mean, rstd);
  }

  double loss() const {
    std::vector<double> mean, rstd;
    stats(&mean, &rstd);
    double total = 0;
    for (int64_t r = 0; r < m; ++r)
      for (int64_t c = 0; c < n; ++c) {
        double y = (x[r * n + c] - mean[r]) * rstd[r];
        if (!gamma.empty()) y *= gamma[c];
        if (!beta.empty()) y += beta[c];
        total += y * dy[r * n + c];
      }
    return total;
  }

  // dL/dv for each element of *values (support/finite_difference.h).
  std::vector<double> numeric_gradient(std::vector<double>* values) {
    return test::numeric_gradient(values, [this] { return loss(); });
  }
};

// Random x, dy, γ, β from make_inputs (fp32 storage: exact in double) plus β.
Forward random_forward(NormKind kind, Affine affine, int64_t m, int64_t n, uint64_t seed) {
  const NormProblem problem = make_problem(kind, n, DType::F32, DType::F32, affine);
  const NormInputs in = make_inputs(problem, m, seed);
  Forward f{kind, m, n, {}, {}, {}, {}};
  for (int64_t r = 0; r < m; ++r)
    for (int64_t c = 0; c < n; ++c) {
      f.x.push_back(in.x.get(r, c));
      f.dy.push_back(in.dy.get(r, c));
    }
  if (has_weight(affine))
    for (int64_t c = 0; c < n; ++c) f.gamma.push_back(in.weight.get(0, c));
  Rng rng(seed, 12345);
  if (has_bias(affine))
    for (int64_t c = 0; c < n; ++c) f.beta.push_back(rng.normal());
  return f;
}

struct FdCase {
  NormKind kind;
  Affine affine;
};

constexpr FdCase kFdCases[] = {
    {NormKind::LayerNorm, Affine::WeightAndBias}, {NormKind::LayerNorm, Affine::WeightOnly},
    {NormKind::LayerNorm, Affine::BiasOnly},      {NormKind::LayerNorm, Affine::None},
    {NormKind::RMSNorm, Affine::WeightOnly},      {NormKind::RMSNorm, Affine::None},
};

TEST(ReferenceBackward, AgreesWithFiniteDifferencesOfTheForward) {
  constexpr int64_t m = 3;
  for (const FdCase& fc : kFdCases)
    for (int64_t n : {1, 2, 5, 17}) {
      const uint64_t seed = fresh_seed();
      SCOPED_TRACE(std::string(kind_label(fc.kind)) + " " + affine_label(fc.affine) + " M=3 N=" + std::to_string(n) +
                   " seed=" + std::to_string(seed) + " (replay: NORMJIT_TEST_SEED=" + std::to_string(seed) + ")");
      Forward f = random_forward(fc.kind, fc.affine, m, n, seed);
      std::vector<double> mean, rstd;
      f.stats(&mean, &rstd);  // exact statistics: the FD forward recomputes them too

      ReferenceProblem p;
      p.kind = fc.kind;
      p.m = m;
      p.n = n;
      p.x = f.x.data();
      p.dy = f.dy.data();
      p.mean = fc.kind == NormKind::LayerNorm ? mean.data() : nullptr;
      p.rstd = rstd.data();
      p.weight = f.gamma.empty() ? nullptr : f.gamma.data();
      p.has_bias = !f.beta.empty();
      const ReferenceGrads ref = reference_backward(p);

      EXPECT_LE(relative_error(f.numeric_gradient(&f.x), ref.dx, ref.dx_term_norm), kFiniteDifferenceTolerance)
          << "dx";
      if (!f.gamma.empty()) {
        EXPECT_LE(relative_error(f.numeric_gradient(&f.gamma), ref.dweight, ref.dweight_term_norm),
                  kFiniteDifferenceTolerance)
            << "dweight";
      }
      if (!f.beta.empty()) {
        EXPECT_LE(relative_error(f.numeric_gradient(&f.beta), ref.dbias, ref.dbias_term_norm),
                  kFiniteDifferenceTolerance)
            << "dbias";
      }
      EXPECT_EQ(ref.dweight.empty(), f.gamma.empty());
      EXPECT_EQ(ref.dbias.empty(), f.beta.empty());
    }
}

// With N = 1, LayerNorm's x − mean is 0, so x̂ = 0 and y = β whatever x: dx and dγ are exactly 0.
TEST(ReferenceBackward, LayerNormOfOneElementHasZeroDxAndDweight) {
  const NormInputs in =
      make_inputs(make_problem(NormKind::LayerNorm, 1, DType::BF16, DType::F32, Affine::WeightAndBias), 7, fresh_seed());
  const ReferenceGrads ref = reference_backward(in);
  for (double v : ref.dx) EXPECT_EQ(v, 0.0);
  EXPECT_EQ(ref.dweight[0], 0.0);
  double dy_sum = 0;
  for (int64_t r = 0; r < in.m; ++r) dy_sum += in.dy.get(r, 0);
  EXPECT_DOUBLE_EQ(ref.dbias[0], dy_sum);
}

// Large inputs are reduced over many threads; the sums must not depend on that split.
TEST(ReferenceBackward, MultithreadedRowsGiveTheSameResultAsOneRowAtATime) {
  const NormProblem problem = make_problem(NormKind::LayerNorm, 4096, DType::F16, DType::F32, Affine::WeightAndBias);
  const NormInputs in = make_inputs(problem, 300, fresh_seed());
  const ReferenceGrads all = reference_backward(in);
  for (int64_t r : {0, 150, 299}) {
    NormInputs row = make_inputs(problem, 1, 0);
    for (int64_t c = 0; c < in.n(); ++c) {
      row.x.set(0, c, in.x.get(r, c));
      row.dy.set(0, c, in.dy.get(r, c));
      row.weight.set(0, c, in.weight.get(0, c));
    }
    row.mean = {in.mean[r]};
    row.rstd = {in.rstd[r]};
    const ReferenceGrads one = reference_backward(row);
    for (int64_t c = 0; c < in.n(); ++c) ASSERT_EQ(one.dx[c], all.dx[r * in.n() + c]) << "row " << r << " col " << c;
  }
}

TEST(NormInputs, SavedStatisticsDescribeTheStoredX) {
  const NormInputs in =
      make_inputs(make_problem(NormKind::LayerNorm, 1000, DType::BF16, DType::F32, Affine::WeightOnly), 5, fresh_seed());
  for (int64_t r = 0; r < in.m; ++r) {
    double sum = 0, squares = 0;
    for (int64_t c = 0; c < in.n(); ++c) sum += in.x.get(r, c);
    const double mean = sum / in.n();
    for (int64_t c = 0; c < in.n(); ++c) squares += (in.x.get(r, c) - mean) * (in.x.get(r, c) - mean);
    EXPECT_EQ(in.mean[r], static_cast<float>(mean));
    EXPECT_EQ(in.rstd[r], static_cast<float>(1 / std::sqrt(squares / in.n() + kNormEps)));
  }
}

TEST(NormInputs, GapsBetweenRowsHoldNaN) {
  const NormInputs in = make_inputs(make_problem(NormKind::RMSNorm, 10, DType::F16, DType::F16, Affine::WeightOnly),
                                    3, fresh_seed(), RowStrides{13, 11, 17});
  EXPECT_EQ(in.x.stride(), 13);
  EXPECT_EQ(in.dy.stride(), 11);
  EXPECT_EQ(in.dx_stride, 17);
  for (int64_t r = 0; r < 3; ++r) {
    for (int64_t c = 10; c < 13; ++c) EXPECT_TRUE(std::isnan(in.x.get(r, c)));
    EXPECT_TRUE(std::isnan(in.dy.get(r, 10)));
    EXPECT_TRUE(std::isfinite(in.x.get(r, 9)));
  }
}

// ---- the comparison -------------------------------------------------------------------------

TEST(CheckTensor, FlagsNaNWhereTheReferenceIsFiniteAndTheReverse) {
  HostTensor out(DType::F32, 1, 4);
  const std::vector<double> ref = {1, 2, std::numeric_limits<double>::quiet_NaN(), 4};
  for (int c = 0; c < 4; ++c) out.set(0, c, ref[c]);
  EXPECT_TRUE(check_tensor("t", out, ref, 0, 1e-5).ok());

  out.set(0, 1, std::numeric_limits<double>::quiet_NaN());  // an element never written
  TensorCheck unwritten = check_tensor("t", out, ref, 0, 1e-5);
  EXPECT_FALSE(unwritten.ok());
  EXPECT_EQ(unwritten.nonfinite_where_finite, 1);
  EXPECT_EQ(unwritten.first_mismatch_col, 1);

  out.set(0, 1, 2);
  out.set(0, 2, 3);  // a NaN that did not propagate
  TensorCheck swallowed = check_tensor("t", out, ref, 0, 1e-5);
  EXPECT_FALSE(swallowed.ok());
  EXPECT_EQ(swallowed.finite_where_nonfinite, 1);
}

TEST(CheckTensor, ErrorIsRelativeToTheLargerOfResultAndTerms) {
  const double off = std::ldexp(1.0, -10);  // exact in fp32
  HostTensor out(DType::F32, 1, 2);
  out.set(0, 0, 1.0 + off);
  out.set(0, 1, 0.0);
  const std::vector<double> ref = {1.0, 0.0};
  EXPECT_EQ(check_tensor("t", out, ref, 0, 1).error, off);
  // The same absolute error against terms 64 times larger: a result that cancelled.
  EXPECT_EQ(check_tensor("t", out, ref, 64, 1).error, off / 64);
}

// A failure names where it lies: the element farthest off, and the rows with elements off by
// ten times the tolerance (a whole row off by a shift of its sums, say, or one chunk).
TEST(CheckTensor, AFailureNamesTheWorstElementAndTheRowsOff) {
  HostTensor out(DType::F32, 6, 8);
  std::vector<double> ref(6 * 8);
  for (int r = 0; r < 6; ++r)
    for (int c = 0; c < 8; ++c) {
      ref[r * 8 + c] = (c % 2 ? 1.0 : -1.0) * (1 + r + c);
      out.set(r, c, ref[r * 8 + c] + ((r == 2 || r == 4) ? 0.5 : 0.0));  // rows 2 and 4 shifted
    }
  out.set(4, 5, ref[4 * 8 + 5] + 2.0);  // and one element of row 4 more
  const TensorCheck check = check_tensor("t", out, ref, 0, 1e-3);
  ASSERT_FALSE(check.ok());
  EXPECT_EQ(check.worst_row, 4);
  EXPECT_EQ(check.worst_col, 5);
  EXPECT_EQ(check.worst_want, ref[4 * 8 + 5]);
  EXPECT_EQ(check.rows_off, 2);
  EXPECT_EQ(check.elements_off, 16);
  EXPECT_EQ(check.first_rows_off, (std::vector<int64_t>{2, 4}));
  std::ostringstream message;
  message << check;
  EXPECT_NE(message.str().find("worst at row 4, column 5"), std::string::npos) << message.str();
  EXPECT_NE(message.str().find("in 2 rows (the first: 2 4)"), std::string::npos) << message.str();
}

TEST(Tolerances, Fp32ParameterGradientsWidenWithTheSquareRootOfRowsUpToACap) {
  EXPECT_EQ(param_grad_tolerance(DType::F32, 1), 1e-5);
  EXPECT_EQ(param_grad_tolerance(DType::F32, 64), 1e-5);
  EXPECT_DOUBLE_EQ(param_grad_tolerance(DType::F32, 4096), 8e-5);
  EXPECT_EQ(param_grad_tolerance(DType::F32, 1 << 20), 1e-4);
  EXPECT_EQ(param_grad_tolerance(DType::BF16, 4096), 1e-2);
  EXPECT_EQ(dx_tolerance(DType::F32), 1e-5);
  EXPECT_EQ(dx_tolerance(DType::F16), 1e-2);
}

// ---- fp16 / bf16 conversions ----------------------------------------------------------------

struct Known {
  float value;
  uint16_t bits;
};

TEST(Fp16Conversion, RoundsKnownValuesToNearestEven) {
  const float tiny = std::ldexp(1.0f, -24);  // the smallest subnormal
  const Known known[] = {
      {0.0f, 0x0000},
      {-0.0f, 0x8000},
      {1.0f, 0x3C00},
      {-2.0f, 0xC000},
      {0.1f, 0x2E66},
      {65504.0f, 0x7BFF},                           // the largest finite
      {65519.0f, 0x7BFF},                           // below the halfway point to 2^16
      {65520.0f, 0x7C00},                           // halfway: ties to even, which is Inf
      {1e6f, 0x7C00},
      {1.0f + std::ldexp(1.0f, -11), 0x3C00},       // tie between 0x3C00 and 0x3C01: even
      {1.0f + 3 * std::ldexp(1.0f, -11), 0x3C02},   // tie between 0x3C01 and 0x3C02: even
      {1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20), 0x3C01},  // just above the tie
      {std::ldexp(1.0f, -14), 0x0400},              // the smallest normal
      {tiny, 0x0001},
      {tiny / 2, 0x0000},                           // tie between 0 and the smallest: even
      {tiny * 1.5f, 0x0002},                        // tie between 1 and 2 ulps: even
      {tiny * 0.75f, 0x0001},
      {tiny * 1023.5f, 0x0400},                     // largest subnormal + half: rounds up to normal
      {-tiny * 3, 0x8003},
  };
  for (const Known& k : known) EXPECT_EQ(float_to_fp16(k.value), k.bits) << k.value;
  EXPECT_EQ(fp16_to_float(0x7BFF), 65504.0f);
  EXPECT_EQ(fp16_to_float(0x0001), tiny);
  EXPECT_EQ(fp16_to_float(0x3555), 0.333251953125f);
}

TEST(Bf16Conversion, RoundsKnownValuesToNearestEven) {
  const Known known[] = {
      {0.0f, 0x0000},
      {-0.0f, 0x8000},
      {1.0f, 0x3F80},
      {0.1f, 0x3DCD},
      {-3.0f, 0xC040},
      {1.0f + std::ldexp(1.0f, -8), 0x3F80},       // tie: even
      {1.0f + 3 * std::ldexp(1.0f, -8), 0x3F82},   // tie: even
      {1.0f + std::ldexp(1.0f, -8) + std::ldexp(1.0f, -20), 0x3F81},
      {std::numeric_limits<float>::max(), 0x7F80}, // rounds past the largest bf16: Inf
      {std::numeric_limits<float>::denorm_min(), 0x0000},
  };
  for (const Known& k : known) EXPECT_EQ(float_to_bf16(k.value), k.bits) << k.value;
  EXPECT_EQ(bf16_to_float(0x3F80), 1.0f);
  EXPECT_EQ(bf16_to_float(0x4049), 3.140625f);
}

TEST(Fp16Conversion, KeepsInfinitiesAndNaN) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(float_to_fp16(inf), 0x7C00);
  EXPECT_EQ(float_to_fp16(-inf), 0xFC00);
  EXPECT_EQ(fp16_to_float(0x7C00), inf);
  EXPECT_EQ(fp16_to_float(0xFC00), -inf);
  EXPECT_TRUE(std::isnan(fp16_to_float(float_to_fp16(std::numeric_limits<float>::quiet_NaN()))));
  // A NaN whose payload sits only in the low bits must not truncate to Inf.
  uint32_t low_payload_nan = 0xFF800001;
  float nan;
  std::memcpy(&nan, &low_payload_nan, 4);
  const uint16_t h = float_to_fp16(nan);
  EXPECT_TRUE(std::isnan(fp16_to_float(h)));
  EXPECT_EQ(h & 0x8000, 0x8000) << "sign kept";
  EXPECT_TRUE(std::isnan(fp16_to_float(0xFFFF))) << "the poison pattern is NaN";
}

TEST(Bf16Conversion, KeepsInfinitiesAndNaN) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(float_to_bf16(inf), 0x7F80);
  EXPECT_EQ(float_to_bf16(-inf), 0xFF80);
  EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(std::numeric_limits<float>::quiet_NaN()))));
  uint32_t low_payload_nan = 0x7F800001;
  float nan;
  std::memcpy(&nan, &low_payload_nan, 4);
  EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(nan))));
  EXPECT_TRUE(std::isnan(bf16_to_float(0xFFFF))) << "the poison pattern is NaN";
}

// Every 16-bit pattern survives widening and narrowing unchanged (NaN stays a NaN).
TEST(Float16Conversions, EveryBitPatternRoundTrips) {
  for (uint32_t bits = 0; bits <= 0xFFFF; ++bits) {
    const auto h = static_cast<uint16_t>(bits);
    const float f16 = fp16_to_float(h), b16 = bf16_to_float(h);
    if (std::isnan(f16))
      ASSERT_TRUE(std::isnan(fp16_to_float(float_to_fp16(f16)))) << std::hex << bits;
    else
      ASSERT_EQ(float_to_fp16(f16), h) << std::hex << bits;
    if (std::isnan(b16))
      ASSERT_TRUE(std::isnan(bf16_to_float(float_to_bf16(b16)))) << std::hex << bits;
    else
      ASSERT_EQ(float_to_bf16(b16), h) << std::hex << bits;
  }
}

// For random floats across the ranges, the result is a nearest representable value, and on
// an exact tie the even one.
TEST(Float16Conversions, RandomFloatsRoundToANearestNeighbour) {
  Rng rng(fresh_seed());
  auto check = [](float f, uint16_t h, float (*widen)(uint16_t), const char* format) {
    const double exact = f, got = widen(h);
    if (std::isinf(got)) return;  // overflow is covered by the known values
    for (int step : {-1, 1}) {
      const uint16_t neighbour = static_cast<uint16_t>(h + step);
      const double other = widen(neighbour);
      if (!std::isfinite(other) || (neighbour & 0x7FFF) == 0x7FFF || ((h ^ neighbour) & 0x8000)) continue;
      const double d_got = std::fabs(got - exact), d_other = std::fabs(other - exact);
      ASSERT_LE(d_got, d_other) << format << " of " << f << " gave " << got << " but " << other << " is nearer";
      if (d_got == d_other) {
        ASSERT_EQ(h & 1, 0) << format << " of " << f << ": a tie must round to even";
      }
    }
  };
  for (int i = 0; i < 200000; ++i) {
    const float f16_range = static_cast<float>(std::ldexp(rng.uniform(-1, 1), static_cast<int>(rng.below(42)) - 26));
    check(f16_range, float_to_fp16(f16_range), fp16_to_float, "fp16");
    const float any = static_cast<float>(std::ldexp(rng.uniform(-1, 1), static_cast<int>(rng.below(240)) - 120));
    check(any, float_to_bf16(any), bf16_to_float, "bf16");
  }
}

TEST(HostTensor, StoresEachDtypeRoundedAndReadsItBack) {
  for (DType dtype : {DType::F32, DType::F16, DType::BF16}) {
    HostTensor t(dtype, 2, 3, 5);
    EXPECT_EQ(t.size_bytes(), static_cast<size_t>(2 * 5 * dtype_bytes(dtype)));
    t.set(1, 2, 0.1);
    EXPECT_EQ(t.get(1, 2), round_to(dtype, 0.1)) << dtype_label(dtype);
    EXPECT_EQ(t.get(1, 1), 0.0);
  }
  EXPECT_EQ(round_to(DType::BF16, 0.1), static_cast<double>(bf16_to_float(0x3DCD)));
}

}  // namespace
}  // namespace normjit::test
