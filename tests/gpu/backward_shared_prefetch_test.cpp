// Rows copied ahead into shared memory (LaunchConfig::shared_prefetch): a block (or cluster)
// holding its row in registers copies its next 1-2 rows into stages of shared memory while it
// works the held one, and reads each row from its stage once. Every such candidate the tuner may
// pick must match the reference, where the stage ring wraps (many rows a group), where groups
// have one row or none (fewer rows than groups: the copies past M are empty groups), in clusters
// and in one block a row, 16-bit and fp32, with and without β, and one row group writing dγ/dβ
// itself. fp32 rows copy ahead only in a pinned config (the search space leaves them out): their
// shared-sums candidates made to copy ahead. The same bits twice: BackwardSharedSums.TheSameBitsTwice.
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
      make_problem(NormKind::LayerNorm, 16384, DType::BF16, DType::F32, Affine::WeightAndBias),  // a cluster of 2
      make_problem(NormKind::RMSNorm, 8192, DType::F16, DType::F16, Affine::WeightOnly),         // one block a row
      make_problem(NormKind::LayerNorm, 65536, DType::BF16, DType::BF16, Affine::WeightAndBias),
      make_problem(NormKind::LayerNorm, 24576, DType::F32, DType::F32, Affine::BiasOnly),  // fp32, 4-wide slots
      make_problem(NormKind::RMSNorm, 262144, DType::BF16, DType::F32, Affine::WeightOnly),  // clusters of 16
      make_problem(NormKind::LayerNorm, 8200, DType::BF16, DType::F32, Affine::WeightAndBias),  // part-filled slices
      // The memory-rich rule's clusters of two (two an SM) and one block (mid_rows_copied_ahead).
      make_problem(NormKind::LayerNorm, 13312, DType::BF16, DType::F32, Affine::WeightAndBias),
      make_problem(NormKind::RMSNorm, 14336, DType::F16, DType::F16, Affine::WeightOnly),
  };
}
// 1: one row group writes dγ/dβ itself; 5: fewer rows than groups; 700: the stages wrap many
// times. Under a sanitizer M·N stays within NORMJIT_TEST_MAX_ELEMENTS (at least 3 rows).
constexpr int64_t kRows[] = {1, 5, 700};

// The configs copying rows ahead to test for a problem: the tuner's candidates that do, and
// for fp32 rows, which the search space leaves out (they never won), its shared-sums candidates
// made to copy one row ahead where that is a config that runs (a user may pin one).
std::vector<codegen::LaunchConfig> copied_ahead(const NormProblem& resolved, const runtime::DeviceLimits& limits,
                                                int64_t m) {
  std::vector<codegen::LaunchConfig> out;
  for (codegen::LaunchConfig c : runtime::candidate_configs(resolved, limits, m, codegen::Pass::Backward)) {
    if (c.shared_prefetch == 0 && resolved.x_dtype == DType::F32 && c.shared_sums && !c.staged) {
      c.shared_prefetch = 1;
      c.prefetch = false;
      c.min_blocks_per_sm = 1;
      try {
        codegen::check_launch_config(resolved, c);
      } catch (const std::invalid_argument&) {
        continue;
      }
      if (codegen::dynamic_shared_bytes(resolved, c) > codegen::max_stage_bytes(limits.sm)) continue;
    }
    if (c.shared_prefetch > 0 && std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
  }
  return out;
}

class BackwardSharedPrefetch : public ScratchCacheGpuTest {};

TEST_F(BackwardSharedPrefetch, EveryCandidateCopyingRowsAheadMatchesTheReference) {
  NJ_REQUIRE_GPU();
  const CUcontext ctx = GpuContext::get()->context();
  const runtime::DeviceLimits limits = Engine::Impl::query_limits(ctx);
  if (limits.sm < 80)
    GTEST_SKIP() << "rows are copied ahead with cp.async on sm_80 and newer, this GPU is sm_" << limits.sm;
  int tried = 0;
  for (const NormProblem& problem : problems())
    for (const int64_t rows : kRows) {
      const int64_t m = sanitize_rows(rows, problem.n);
      // Contiguous rows: the alignment the call will derive, so the database entry is the one used.
      const NormProblem resolved = resolved_problem(make_inputs(problem, m, fresh_seed()));
      const std::vector<codegen::LaunchConfig> configs = copied_ahead(resolved, limits, m);
      each_config_matches_reference(limits, problem, resolved, m, configs);
      tried += static_cast<int>(configs.size());
      EXPECT_FALSE(configs.empty()) << describe_problem(problem) << " M=" << m << ": no candidate copies rows ahead";
    }
  EXPECT_GE(tried, 40);
}

}  // namespace
}  // namespace normjit::test
