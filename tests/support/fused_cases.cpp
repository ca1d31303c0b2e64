#include "support/fused_cases.h"

#include <gtest/gtest.h>

#include <string>

#include "support/kernel_warmup.h"
#include "support/problem_variants.h"
#include "support/random.h"
#include "support/sanitize_mode.h"

namespace normjit::test {

int64_t fused_max_elements() {
  return sanitize_matrix() ? sanitize_max_elements(kFusedMaxElements) : kFusedMaxElements;
}

namespace {
constexpr int kFailedCasesReported = 5;
}  // namespace

const std::vector<int64_t> kFusedRowCounts = {1, 199, 4096};
const std::vector<int64_t> kFusedHiddenSizes = {1, 33, 4096, 8192, 65536};

NormProblem fused_base_problem(NormKind kind, int64_t n, DType x, DType dx) {
  return make_problem(kind, n, x, DType::F32, kind == NormKind::LayerNorm ? Affine::WeightAndBias : Affine::WeightOnly,
                      dx);
}

const std::vector<FamilyShape> kFamilyShapes = {{33, 199},   {4096, 199}, {5120, 199}, {5003, 199},
                                                {65536, 37}, {262144, 3}, {2097152, 2}};

void run_fused_cases(Engine& engine, CUstream stream, const std::vector<FusedCase>& cases) {
  std::vector<NormProblem> kernels;
  for (const FusedCase& c : cases) {
    for (const NormProblem& v : alignment_variants(c.problem)) kernels.push_back(v);
    if (c.run.misalign_elements > 0) {
      NormProblem misaligned = c.problem;
      misaligned.alignment = dtype_bytes(c.problem.x_dtype) < dtype_bytes(c.problem.dx_dtype)
                                 ? dtype_bytes(c.problem.x_dtype)
                                 : dtype_bytes(c.problem.dx_dtype);
      kernels.push_back(misaligned);
    }
  }
  const std::vector<std::string> failures = prepare_in_parallel(engine, kernels);
  ASSERT_TRUE(failures.empty()) << failures.size() << " kernels failed to prepare, the first: " << failures.front();
  int failed = 0;
  for (const FusedCase& c : cases) {
    const NormInputs in = make_inputs(c.problem, c.m, fresh_seed(), {}, c.spec);
    const ::testing::AssertionResult match = backward_matches_reference(engine, in, stream, c.run);
    EXPECT_TRUE(match) << (c.run.dx_is_dresidual ? "dx is dresidual (in place); " : "")
                       << (c.run.dx_is_x ? "dx is x (in place); " : "") << (c.run.dx_is_dy ? "dx is dy (in place); " : "")
                       << "misaligned by " << c.run.misalign_elements << " elements; workspace: "
                       << (c.run.caller_workspace ? "the caller's" : "the engine's");
    if (!match && ++failed == kFailedCasesReported) FAIL() << "stopping after " << failed << " failed cases";
  }
}

}  // namespace normjit::test
