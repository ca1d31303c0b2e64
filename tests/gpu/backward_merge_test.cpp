// Merged blocks (LaunchConfig::merge, sm_90): at few rows, up to 8 blocks of a cluster each work
// their own rows and add their dγ/dβ in distributed shared memory before writing one partial
// row. Every merged config the tuner may pick (up to 8 rows) or a database may hold must match the reference: one row per block
// and several, rows longer than the 4096 columns that meet at a time, odd N, grids with blocks
// that get no row, and launches of one cluster that write dγ/dβ themselves.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>

#include "codegen/launch_config.h"
#include "codegen/norm_problem.h"
#include "codegen/search_space.h"
#include "runtime/cuda_driver.h"
#include "runtime/engine_impl.h"
#include "runtime/launch_plan.h"
#include "runtime/tuner.h"
#include "support/device_run.h"
#include "support/gpu.h"
#include "support/norm_inputs.h"
#include "support/problem_variants.h"
#include "support/random.h"
#include "support/scratch_cache.h"

namespace normjit::test {
namespace {
using runtime::driver;

// 33: 32-lane groups, several rows a block; 1000 and 5003 (odd, 2-byte aligned in 16-bit
// types): part-filled vector passes; 8192: the merge in two passes of 4096 columns.
const ProblemSpec kProblems[] = {
    {NormKind::LayerNorm, DType::BF16, DType::F32, Affine::WeightAndBias, 4096},
    {NormKind::LayerNorm, DType::F16, DType::F16, Affine::BiasOnly, 33},
    {NormKind::RMSNorm, DType::F32, DType::F32, Affine::WeightOnly, 8192},
    {NormKind::LayerNorm, DType::BF16, DType::BF16, Affine::WeightAndBias, 5003},
    {NormKind::RMSNorm, DType::BF16, DType::F32, Affine::WeightOnly, 1000},
};
// 5: one cluster of 8 blocks, 3 of them without a row (dγ/dβ written directly); 37 and 199:
// several clusters, the last one part-filled.
constexpr int64_t kRows[] = {5, 37, 199};
constexpr size_t kCandidatesPerShape = 3;

class BackwardMerge : public ScratchCacheGpuTest {};

TEST_F(BackwardMerge, EveryMergedCandidateMatchesTheReference) {
  NJ_REQUIRE_GPU();
  const CUcontext ctx = GpuContext::get()->context();
  const runtime::DeviceLimits limits = Engine::Impl::query_limits(ctx);
  if (limits.sm < 90) GTEST_SKIP() << "merged blocks are thread-block clusters: they need sm_90, this GPU is sm_" << limits.sm;
  int tried = 0;
  for (const ProblemSpec& spec : kProblems)
    for (const int64_t m : kRows) {
      const NormProblem problem = spec.problem();
      // Contiguous rows: the alignment the call will derive, so the database entry is the one used.
      NormInputs inputs = make_inputs(problem, m, fresh_seed());
      const NormProblem resolved = resolved_problem(inputs);
      size_t taken = 0;
      // The search tries merged blocks only up to 8 rows (they never won beyond, bench/NOTES.md
      // entry 25), but a pinned or older database's merge must still run: each candidate's merged
      // twin for m, as merge_for_few_rows makes it.
      for (codegen::LaunchConfig c : runtime::candidate_configs(resolved, limits, m, codegen::Pass::Backward)) {
        if (c.merge == 1) c.merge = codegen::merge_for_few_rows(resolved, c, limits.sm, m);
        if (c.merge == 1 || taken == kCandidatesPerShape) continue;
        try {
          codegen::check_launch_config(resolved, c);
        } catch (const std::invalid_argument&) {
          continue;
        }
        if (!codegen::prune_reason(resolved, c, limits.sm).empty()) continue;
        ++taken;
        ++tried;
        // An engine whose database holds this candidate for m's bucket.
        Engine engine(config(TuneMode::Cached));
        engine.impl().pin_config(limits, resolved, m, c);
        EXPECT_EQ(engine.impl().kernel_for(ctx, resolved, m).config, c) << codegen::describe(c);
        for (bool caller_workspace : {false, true}) {
          RunOptions options;
          options.caller_workspace = caller_workspace;
          EXPECT_TRUE(backward_matches_reference(engine, make_inputs(problem, m, fresh_seed()), stream(), options))
              << codegen::describe(c) << (caller_workspace ? ", caller's workspace" : "");
        }
      }
      // At 5 rows, N = 33 has 32 rows a block: one block, nothing to merge.
      if (m >= 37) EXPECT_GT(taken, 0u) << describe_case(inputs) << ": no merged candidate";
    }
  EXPECT_GE(tried, 15);
}

// The heuristic does not merge (graph replays found merged blocks slower, bench/NOTES.md entry
// 17), but a merge the tuner picked and the database holds must run, and up to 8 rows one
// cluster of merged blocks writes dγ/dβ itself, with no reduction launch.
TEST_F(BackwardMerge, ATunedMergeOfOneClusterWritesTheGradientsItself) {
  NJ_REQUIRE_GPU();
  const CUcontext ctx = GpuContext::get()->context();
  const runtime::DeviceLimits limits = Engine::Impl::query_limits(ctx);
  if (limits.sm < 90) GTEST_SKIP() << "merged blocks need sm_90, this GPU is sm_" << limits.sm;
  const NormProblem problem = make_problem(NormKind::LayerNorm, 4096, DType::BF16, DType::F32, Affine::WeightAndBias);
  for (const int64_t m : {2, 8, 37}) {
    const NormInputs inputs = make_inputs(problem, m, fresh_seed());
    SCOPED_TRACE(describe_case(inputs));
    const NormProblem resolved = resolved_problem(inputs);
    Engine engine(config(TuneMode::Cached));
    EXPECT_EQ(engine.impl().kernel_for(ctx, resolved, m).config.merge, 1) << "the heuristic";
    // The rows family's config (the column pass, which the heuristic takes here from 16 rows,
    // does not merge).
    codegen::LaunchConfig merged = codegen::choose_launch_config(resolved, limits.sm, limits.sm_count, std::min<int64_t>(m, 8));
    merged.merge = codegen::merge_for_few_rows(resolved, merged, limits.sm, m);
    ASSERT_GT(merged.merge, 1) << codegen::describe(merged);
    Engine tuned(config(TuneMode::Cached));
    tuned.impl().pin_config(limits, resolved, m, merged);
    const LoadedKernel& k = tuned.impl().kernel_for(ctx, resolved, m);
    EXPECT_EQ(k.config, merged) << codegen::describe(k.config);
    EXPECT_EQ(runtime::writes_gradients_directly(k.config, runtime::row_groups(k.config, k.limits, m, k.resident_groups)),
              m <= 8)
        << "one cluster of " << k.config.merge << " blocks holds every row up to 8: no reduction launch";
    EXPECT_TRUE(backward_matches_reference(tuned, inputs, stream()));
  }
}

}  // namespace
}  // namespace normjit::test
