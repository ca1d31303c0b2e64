// Paired rows (LaunchConfig::paired_rows): a block (or cluster) holding one row in registers
// takes two of its rows at a turn, their row sums meeting together and each slot's column sums
// read and written once for both. Every such candidate the tuner may pick must match the
// reference, and give the very bits of the same config unpaired (the rows and the order of every
// addition are the same): in clusters and in one block a row, 16-bit, fp32 and phased (odd 16-bit
// rows), with and without β; at M = 1 (a lone row: its pair is past M, one row group writing
// dγ/dβ itself), 5 (fewer rows than groups) and 701 (an odd count: groups end on a lone row).
#include <gtest/gtest.h>

#include <algorithm>

#include "codegen/launch_config.h"
#include "codegen/norm_problem.h"
#include "runtime/engine_impl.h"
#include "runtime/tuner.h"
#include "support/device_run.h"
#include "support/gpu.h"
#include "support/norm_inputs.h"
#include "support/problem_variants.h"
#include "support/random.h"
#include "support/sanitize_mode.h"
#include "support/scratch_cache.h"

namespace normjit::test {
namespace {

std::vector<NormProblem> problems() {
  return {
      make_problem(NormKind::LayerNorm, 16384, DType::BF16, DType::F32, Affine::WeightAndBias),  // clusters
      make_problem(NormKind::RMSNorm, 8192, DType::F16, DType::F16, Affine::WeightOnly),         // one block a row
      make_problem(NormKind::LayerNorm, 5003, DType::BF16, DType::F32, Affine::WeightAndBias),   // phased
      make_problem(NormKind::LayerNorm, 24576, DType::F32, DType::F32, Affine::BiasOnly),        // fp32
      make_problem(NormKind::RMSNorm, 65536, DType::BF16, DType::F32, Affine::WeightOnly),
      make_problem(NormKind::LayerNorm, 2050, DType::BF16, DType::BF16, Affine::WeightAndBias),  // part-filled slots
  };
}
constexpr int64_t kRows[] = {1, 5, 701};
// Under a sanitizer M·N stays within NORMJIT_TEST_MAX_ELEMENTS (at least 3 rows).
int64_t rows_for(int64_t m, int64_t n) {
  if (m <= 5 || !sanitize_matrix()) return m;
  return std::clamp<int64_t>(sanitize_max_elements(int64_t{1} << 20) / n, 3, m);
}

std::vector<codegen::LaunchConfig> paired(const NormProblem& resolved, const runtime::DeviceLimits& limits, int64_t m) {
  std::vector<codegen::LaunchConfig> out;
  for (const codegen::LaunchConfig& c : runtime::candidate_configs(resolved, limits, m, codegen::Pass::Backward))
    if (c.paired_rows) out.push_back(c);
  return out;
}

class BackwardPairedRows : public ScratchCacheGpuTest {};

TEST_F(BackwardPairedRows, EveryPairedCandidateMatchesTheReferenceAndItsUnpairedBits) {
  NJ_REQUIRE_GPU();
  const CUcontext ctx = GpuContext::get()->context();
  const runtime::DeviceLimits limits = Engine::Impl::query_limits(ctx);
  int tried = 0;
  for (const NormProblem& problem : problems())
    for (const int64_t rows : kRows) {
      const int64_t m = rows_for(rows, problem.n);
      const NormInputs inputs = make_inputs(problem, m, fresh_seed());
      // Contiguous rows: the alignment the call will derive, so the pinned entry is the one used.
      const NormProblem resolved = resolved_problem(inputs);
      const std::vector<codegen::LaunchConfig> configs = paired(resolved, limits, m);
      EXPECT_FALSE(configs.empty()) << describe_problem(problem) << " M=" << m << ": no candidate pairs rows";
      each_config_matches_reference(limits, problem, resolved, m, configs);
      for (const codegen::LaunchConfig& c : configs) {
        codegen::LaunchConfig unpaired = c;
        unpaired.paired_rows = false;
        const Gradients one_at_a_time = run_backward_on_gpu(*pinned_engine(limits, resolved, m, unpaired), inputs, stream());
        EXPECT_TRUE(same_bits(one_at_a_time, run_backward_on_gpu(*pinned_engine(limits, resolved, m, c), inputs, stream())))
            << describe_problem(problem) << " M=" << m << ": " << codegen::describe(c) << " against itself unpaired";
        ++tried;
      }
    }
  EXPECT_GE(tried, 40);
}

}  // namespace
}  // namespace normjit::test
