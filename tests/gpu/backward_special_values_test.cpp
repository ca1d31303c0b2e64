// NaN and Inf propagate as they do in PyTorch's eager kernels (plain IEEE arithmetic, no
// masking): a non-finite input reaches exactly the outputs whose formulas read it. The
// float64 reference, fed the same values, is the oracle; each row of the table also states
// the expected pattern, which is checked against the reference first, so the table reads as
// the specification.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <limits>
#include <vector>

#include "support/device_run.h"
#include "support/problem_variants.h"
#include "support/random.h"
#include "support/reference.h"
#include "support/shared_engine.h"

namespace normjit::test {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Which rows of dx, or which columns of dγ / dβ, turn non-finite.
enum class Reach { Nothing, TheRowOrColumn, Everything };

struct Injection {
  const char* what;
  std::function<void(NormInputs&, int64_t row, int64_t col)> inject;
  Reach dx_rows, dweight_columns, dbias_columns;
  bool needs_weight = false;
};

const Injection kInjections[] = {
    // dy[r, c] enters both row sums of row r, and the column sums of column c.
    {"NaN in dy[r, c]", [](NormInputs& in, int64_t r, int64_t c) { in.dy.set(r, c, kNaN); },
     Reach::TheRowOrColumn, Reach::TheRowOrColumn, Reach::TheRowOrColumn},
    {"+Inf in dy[r, c]", [](NormInputs& in, int64_t r, int64_t c) { in.dy.set(r, c, kInf); },
     Reach::TheRowOrColumn, Reach::TheRowOrColumn, Reach::TheRowOrColumn},
    // x changed after the forward saved its statistics: only x̂[r, c] is NaN; dβ never reads x.
    {"NaN in x[r, c], statistics saved before", [](NormInputs& in, int64_t r, int64_t c) { in.x.set(r, c, kNaN); },
     Reach::TheRowOrColumn, Reach::TheRowOrColumn, Reach::Nothing},
    {"-Inf in x[r, c], statistics saved before", [](NormInputs& in, int64_t r, int64_t c) { in.x.set(r, c, -kInf); },
     Reach::TheRowOrColumn, Reach::TheRowOrColumn, Reach::Nothing},
    // The forward saw the NaN: row r's mean and rstd are NaN, so all of x̂[r, :] is, and every
    // dγ column sums one NaN.
    {"NaN in x[r, c], statistics saved after",
     [](NormInputs& in, int64_t r, int64_t c) {
       in.x.set(r, c, kNaN);
       compute_saved_stats(in);
     },
     Reach::TheRowOrColumn, Reach::Everything, Reach::Nothing},
    {"NaN in rstd[r]", [](NormInputs& in, int64_t r, int64_t) { in.rstd[r] = std::numeric_limits<float>::quiet_NaN(); },
     Reach::TheRowOrColumn, Reach::Everything, Reach::Nothing},
    // γ[c] scales column c of every row, so every row's sums read it; dγ and dβ do not.
    {"NaN in weight[c]", [](NormInputs& in, int64_t, int64_t c) { in.weight.set(0, c, kNaN); },
     Reach::Everything, Reach::Nothing, Reach::Nothing, /*needs_weight=*/true},
};

// Checks that exactly the expected rows (of a [rows, cols] array) are entirely non-finite
// and all others entirely finite; with transpose, the same for columns.
::testing::AssertionResult reaches(const std::vector<double>& values, int64_t rows, int64_t cols, int64_t hit,
                                   Reach reach, bool by_column) {
  const int64_t lines = by_column ? cols : rows, length = by_column ? rows : cols;
  for (int64_t line = 0; line < lines; ++line) {
    const bool expect_nonfinite = reach == Reach::Everything || (reach == Reach::TheRowOrColumn && line == hit);
    for (int64_t i = 0; i < length; ++i) {
      const double v = by_column ? values[i * cols + line] : values[line * cols + i];
      if (std::isfinite(v) == expect_nonfinite)
        return ::testing::AssertionFailure() << (by_column ? "column " : "row ") << line << " element " << i
                                             << " is " << v << ", expected "
                                             << (expect_nonfinite ? "NaN/Inf" : "finite");
    }
  }
  return ::testing::AssertionSuccess();
}

constexpr ProblemSpec kProblems[] = {
    {NormKind::LayerNorm, DType::BF16, DType::F32, Affine::WeightAndBias, 1000},
    {NormKind::LayerNorm, DType::F32, DType::F32, Affine::WeightAndBias, 4096},
    {NormKind::LayerNorm, DType::F16, DType::F16, Affine::BiasOnly, 33},
    {NormKind::RMSNorm, DType::F16, DType::F16, Affine::WeightOnly, 1024},
    {NormKind::RMSNorm, DType::F32, DType::F32, Affine::WeightOnly, 131072},  // a cluster of blocks
    {NormKind::LayerNorm, DType::BF16, DType::BF16, Affine::None, 8192},
};

class BackwardSpecialValues : public GpuTest {};

TEST_F(BackwardSpecialValues, NanAndInfReachExactlyTheOutputsThatReadThem) {
  Engine& engine = shared_engine();
  constexpr int64_t m = 37, row = 5;
  for (const ProblemSpec& sp : kProblems) {
    const NormProblem problem = sp.problem();
    const int64_t col = sp.n / 3;
    for (const Injection& injection : kInjections) {
      if (injection.needs_weight && !problem.has_weight) continue;
      SCOPED_TRACE(std::string(injection.what) + " with r=" + std::to_string(row) + ", c=" + std::to_string(col));
      NormInputs inputs = make_inputs(problem, m, fresh_seed());
      injection.inject(inputs, row, col);
      const ReferenceGrads ref = reference_backward(inputs);
      ASSERT_TRUE(reaches(ref.dx, m, sp.n, row, injection.dx_rows, false)) << "reference dx, " << describe_case(inputs);
      if (problem.has_weight) {
        ASSERT_TRUE(reaches(ref.dweight, 1, sp.n, col, injection.dweight_columns, true)) << "reference dweight";
      }
      if (problem.has_bias) {
        ASSERT_TRUE(reaches(ref.dbias, 1, sp.n, col, injection.dbias_columns, true)) << "reference dbias";
      }

      Gradients out;
      ASSERT_NO_THROW(out = run_backward_on_gpu(engine, inputs, stream())) << describe_case(inputs);
      EXPECT_TRUE(gradients_match(inputs, out, ref));
    }
  }
}

}  // namespace
}  // namespace normjit::test
