// Early weights (LaunchConfig::early_weights): with x̂ recomputed from y, each thread reads its
// slots' γ and β at the top of each row instead of at each slot's turn. Only the loads move, so
// the tuner's first such candidates must match the reference and give the very bits of the same
// config without it: rows of an element (odd N) and of 16-byte vectors, one row a block and
// several, LayerNorm and RMSNorm, 16-bit and fp32, at M = 1 and 701; and with columns where γ = 0
// (x given as the fallback there), where the recovered x̂ takes the other branch.
#include <gtest/gtest.h>

#include <algorithm>

#include "codegen/launch_config.h"
#include "runtime/engine_impl.h"
#include "runtime/tuner.h"
#include "support/compare.h"
#include "support/device_run.h"
#include "support/gpu.h"
#include "support/norm_inputs.h"
#include "support/problem_variants.h"
#include "support/random.h"
#include "support/sanitize_mode.h"
#include "support/scratch_cache.h"

namespace normjit::test {
namespace {

// One test per problem, so that shards and a sanitizer's run can take them apart.
const ProblemSpec kProblems[] = {
    {NormKind::LayerNorm, DType::BF16, DType::F32, Affine::WeightAndBias, 4095},  // an element a thread's slot
    {NormKind::RMSNorm, DType::F16, DType::F16, Affine::WeightOnly, 3001},
    {NormKind::LayerNorm, DType::F32, DType::F32, Affine::WeightAndBias, 1001},
    {NormKind::LayerNorm, DType::BF16, DType::BF16, Affine::WeightAndBias, 33},  // several rows a block
    {NormKind::RMSNorm, DType::F32, DType::F32, Affine::WeightOnly, 8192},       // 16-byte vectors
};
constexpr int64_t kRows[] = {1, 701};

NormProblem recomputing(const ProblemSpec& spec) {
  NormProblem p = spec.problem();
  p.recompute_from_output = true;
  return p;
}

// The first kConfigs of the tuner's candidates for m rows that read their weights early (the
// heuristic's own among them, early or flipped; each compiles twice, so not all 20).
constexpr size_t kConfigs = 4;
std::vector<codegen::LaunchConfig> early(const NormProblem& resolved, const runtime::DeviceLimits& limits, int64_t m) {
  std::vector<codegen::LaunchConfig> out;
  for (const codegen::LaunchConfig& c : runtime::candidate_configs(resolved, limits, m, codegen::Pass::Backward))
    if (c.early_weights && out.size() < kConfigs) out.push_back(c);
  return out;
}

class BackwardEarlyWeights : public ScratchCacheGpuTest, public ::testing::WithParamInterface<ProblemSpec> {};

TEST_P(BackwardEarlyWeights, EveryEarlyConfigMatchesTheReferenceAndTheBitsWithout) {
  NJ_REQUIRE_GPU();
  const CUcontext ctx = GpuContext::get()->context();
  const runtime::DeviceLimits limits = Engine::Impl::query_limits(ctx);
  const NormProblem problem = recomputing(GetParam());
  int tried = 0;
  for (const int64_t rows : kRows) {
    const int64_t m = sanitize_rows(rows, problem.n);
    NormInputs inputs = make_inputs(problem, m, fresh_seed());
    const NormProblem resolved = resolved_problem(inputs);
    const std::vector<codegen::LaunchConfig> configs = early(resolved, limits, m);
    each_config_matches_reference(limits, problem, resolved, m, configs);
    // γ = 0 in a few columns, x given there: y = β, and x̂ comes from x.
    FusedSpec with_x;
    with_x.recompute_with_x = true;
    NormInputs zeros = make_inputs(problem, m, fresh_seed(), {}, with_x);
    for (int64_t col : {int64_t{0}, problem.n / 2, problem.n - 1}) zeros.weight.set(0, col, 0.0);
    compute_forward_output(zeros);
    for (const codegen::LaunchConfig& c : configs) {
      codegen::LaunchConfig late = c;
      late.early_weights = false;
      const std::unique_ptr<Engine> a = pinned_engine(limits, resolved, m, c);
      const std::unique_ptr<Engine> b = pinned_engine(limits, resolved, m, late);
      ++tried;
      EXPECT_TRUE(same_bits(run_backward_on_gpu(*b, inputs, stream()), run_backward_on_gpu(*a, inputs, stream())))
          << describe_problem(problem) << " M=" << m << ": " << codegen::describe(c) << " against itself without";
      EXPECT_TRUE(backward_matches_reference(*a, zeros, stream())) << codegen::describe(c) << " with γ = 0 columns";
      EXPECT_TRUE(same_bits(run_backward_on_gpu(*b, zeros, stream()), run_backward_on_gpu(*a, zeros, stream())))
          << describe_problem(problem) << " M=" << m << ": " << codegen::describe(c) << " with γ = 0 columns";
    }
  }
  EXPECT_GE(tried, 2) << describe_problem(problem) << ": early configs at each M";
}

INSTANTIATE_TEST_SUITE_P(Problems, BackwardEarlyWeights, ::testing::ValuesIn(kProblems),
                         [](const ::testing::TestParamInfo<ProblemSpec>& info) {
                           const ProblemSpec& s = info.param;
                           return std::string(kind_label(s.kind)) + "_" + dtype_label(s.x) + "_N" + std::to_string(s.n);
                         });

}  // namespace
}  // namespace normjit::test
