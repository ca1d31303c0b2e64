// Paired rows (LaunchConfig::paired_rows): a block (or cluster) holding one row in registers
// takes two of its rows at a turn, their row sums meeting together and each slot's column sums
// read and written once for both. Every such candidate the tuner may pick must match the
// reference, and give the very bits of the same config unpaired wherever both hold as many row
// groups (the rows and the order of every addition are then the same): in clusters and in one
// block a row, 16-bit, fp32 and phased (odd 16-bit rows), with and without β; at M = 1 (a lone
// row: its pair is past M, one row group writing dγ/dβ itself), 5 (fewer rows than groups) and
// 701 (an odd count: groups end on a lone row).
#include <gtest/gtest.h>

#include <algorithm>

#include "codegen/launch_config.h"
#include "codegen/norm_problem.h"
#include "codegen/search_space.h"
#include "runtime/engine_impl.h"
#include "runtime/tuner.h"
#include "support/device_run.h"
#include "support/gpu.h"
#include "support/host_tensor.h"
#include "support/norm_inputs.h"
#include "support/problem_variants.h"
#include "support/random.h"
#include "support/sanitize_mode.h"
#include "support/scratch_cache.h"

namespace normjit::test {
namespace {

// One test per problem, so that shards and a sanitizer's run can take them apart.
const ProblemSpec kProblems[] = {
    {NormKind::LayerNorm, DType::BF16, DType::F32, Affine::WeightAndBias, 16384},  // clusters
    {NormKind::RMSNorm, DType::F16, DType::F16, Affine::WeightOnly, 8192},         // one block a row
    {NormKind::LayerNorm, DType::BF16, DType::F32, Affine::WeightAndBias, 5003},   // phased
    {NormKind::LayerNorm, DType::F32, DType::F32, Affine::BiasOnly, 24576},        // fp32
    {NormKind::RMSNorm, DType::BF16, DType::F32, Affine::WeightOnly, 65536},
    {NormKind::LayerNorm, DType::BF16, DType::BF16, Affine::WeightAndBias, 2050},  // part-filled slots
};
constexpr int64_t kRows[] = {1, 5, 701};

// The paired configs to test: the tuner's paired candidates for many rows (it tries pairs from
// 256 rows), pinned at every M, and each other candidate for many rows paired where that runs
// (a user may pin one).
std::vector<codegen::LaunchConfig> paired(const NormProblem& resolved, const runtime::DeviceLimits& limits) {
  std::vector<codegen::LaunchConfig> out;
  for (codegen::LaunchConfig c : runtime::candidate_configs(resolved, limits, -1, codegen::Pass::Backward)) {
    c.paired_rows = true;
    c.prefetch = false;
    c.shared_prefetch = 0;
    try {
      codegen::check_launch_config(resolved, c);
    } catch (const std::invalid_argument&) {
      continue;
    }
    if (!codegen::prune_reason(resolved, c, limits.sm).empty()) continue;  // the engine would not run it
    if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
  }
  return out;
}

class BackwardPairedRows : public ScratchCacheGpuTest, public ::testing::WithParamInterface<ProblemSpec> {};

TEST_P(BackwardPairedRows, EveryPairedConfigMatchesTheReferenceAndItsUnpairedBits) {
  NJ_REQUIRE_GPU();
  const CUcontext ctx = GpuContext::get()->context();
  const runtime::DeviceLimits limits = Engine::Impl::query_limits(ctx);
  const NormProblem problem = GetParam().problem();
  int tried = 0, compared = 0;
  for (const int64_t rows : kRows) {
    const int64_t m = sanitize_rows(rows, problem.n);
    const NormInputs inputs = make_inputs(problem, m, fresh_seed());
    // Contiguous rows: the alignment the call will derive, so the pinned entry is the one used.
    const NormProblem resolved = resolved_problem(inputs);
    const std::vector<codegen::LaunchConfig> configs = paired(resolved, limits);
    each_config_matches_reference(limits, problem, resolved, m, configs);
    for (const codegen::LaunchConfig& c : configs) {
      codegen::LaunchConfig unpaired = c;
      unpaired.paired_rows = false;
      const std::unique_ptr<Engine> two = pinned_engine(limits, resolved, m, c);
      const std::unique_ptr<Engine> one = pinned_engine(limits, resolved, m, unpaired);
      ++tried;
      // The same rows a group, so the same bits, where as many groups fit at once (pairs hold
      // more registers: fewer of their blocks may be resident, and then fewer row groups sum).
      if (two->impl().kernel_for(ctx, resolved, m).resident_groups != one->impl().kernel_for(ctx, resolved, m).resident_groups)
        continue;
      ++compared;
      EXPECT_TRUE(same_bits(run_backward_on_gpu(*one, inputs, stream()), run_backward_on_gpu(*two, inputs, stream())))
          << describe_problem(problem) << " M=" << m << ": " << codegen::describe(c) << " against itself unpaired";
    }
  }
  EXPECT_GE(tried, 3) << describe_problem(problem) << ": paired configs at each M";
  EXPECT_GE(compared, 1) << describe_problem(problem) << ": no paired config held as many groups as unpaired";
}

INSTANTIATE_TEST_SUITE_P(Problems, BackwardPairedRows, ::testing::ValuesIn(kProblems),
                         [](const ::testing::TestParamInfo<ProblemSpec>& info) {
                           const ProblemSpec& s = info.param;
                           return std::string(kind_label(s.kind)) + "_" + dtype_label(s.x) + "_N" + std::to_string(s.n);
                         });

}  // namespace
}  // namespace normjit::test
