// The column pass (LaunchConfig::column_pass, templates/column_pass.cuh): row sums, then blocks
// that own columns of every row and write dx, dγ and dβ themselves. Every column candidate the
// tuner may pick must match the reference: odd N (a part-filled last slot, columns past N in
// the last block), rows 2-byte aligned (1-element vectors), padded rows, one row and rows that
// leave lanes without any, and the bits of dγ/dβ must not change from run to run.
#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "codegen/launch_config.h"
#include "runtime/backward_call.h"
#include "runtime/engine_impl.h"
#include "runtime/launch_plan.h"
#include "runtime/tuner.h"
#include "support/device_run.h"
#include "support/gpu.h"
#include "support/norm_inputs.h"
#include "support/problem_variants.h"
#include "support/random.h"
#include "support/reference.h"
#include "support/scratch_cache.h"

namespace normjit::test {
namespace {

const ProblemSpec kProblems[] = {
    {NormKind::LayerNorm, DType::BF16, DType::F32, Affine::WeightAndBias, 8192},
    {NormKind::RMSNorm, DType::F16, DType::F16, Affine::WeightOnly, 4096},
    {NormKind::LayerNorm, DType::F32, DType::F32, Affine::BiasOnly, 1000},
    {NormKind::LayerNorm, DType::BF16, DType::BF16, Affine::WeightAndBias, 5003},  // 2-byte aligned rows
    {NormKind::RMSNorm, DType::BF16, DType::F32, Affine::None, 33},
    {NormKind::LayerNorm, DType::F16, DType::F32, Affine::WeightOnly, 1},
    {NormKind::LayerNorm, DType::BF16, DType::F32, Affine::WeightAndBias, 65536},  // 4096 slots: 8-32 blocks
};
constexpr int64_t kRows[] = {1, 37, 199};

// The column candidates of the search space at m, and a few shapes it does not enumerate
// (one lane, 128-thread blocks, lanes beyond the rows).
std::vector<codegen::LaunchConfig> column_configs(const NormProblem& resolved, const runtime::DeviceLimits& limits,
                                                  int64_t m) {
  std::vector<codegen::LaunchConfig> out;
  for (const codegen::LaunchConfig& c : runtime::candidate_configs(resolved, limits, m, codegen::Pass::Backward))
    if (c.column_pass > 0) out.push_back(c);
  for (const auto& [threads, lanes] : {std::pair{128, 1}, std::pair{256, 128}})
    out.push_back(codegen::column_pass_config(resolved, threads, lanes));
  return out;
}

class BackwardColumnPass : public ScratchCacheGpuTest {};

TEST_F(BackwardColumnPass, EveryColumnConfigMatchesTheReference) {
  NJ_REQUIRE_GPU();
  const CUcontext ctx = GpuContext::get()->context();
  const runtime::DeviceLimits limits = Engine::Impl::query_limits(ctx);
  int searched = 0, tried = 0;
  for (const ProblemSpec& spec : kProblems)
    for (const int64_t m : kRows) {
      const NormProblem problem = spec.problem();
      const NormInputs inputs = make_inputs(problem, m, fresh_seed());
      const NormProblem resolved = resolved_problem(inputs);
      for (const codegen::LaunchConfig& c : column_configs(resolved, limits, m)) {
        SCOPED_TRACE(describe_case(inputs) + " with " + codegen::describe(c));
        searched += c.threads != 128 && c.column_pass != 128;
        ++tried;
        Engine engine(config(TuneMode::Cached));
        engine.impl().pin_config(limits, resolved, m, c);
        const LoadedKernel& k = engine.impl().kernel_for(ctx, resolved, m);
        ASSERT_EQ(k.config, c);
        EXPECT_TRUE(runtime::writes_gradients_directly(k.config, runtime::row_groups(k.config, k.limits, m, 1)))
            << "no partial rows, no reduction launch";
        for (bool caller_workspace : {false, true}) {
          RunOptions options;
          options.caller_workspace = caller_workspace;
          EXPECT_TRUE(backward_matches_reference(engine, make_inputs(problem, m, fresh_seed()), stream(), options))
              << (caller_workspace ? "caller's workspace" : "engine's workspace");
        }
      }
    }
  EXPECT_GE(searched, 30) << "column candidates the search space offered";
  EXPECT_GE(tried, 60);
}

// Padded rows (strides beyond N) and rows shifted off 16-byte alignment, and the same bits of
// dγ/dβ on every run.
TEST_F(BackwardColumnPass, PaddedAndShiftedRowsAndRepeatedRuns) {
  NJ_REQUIRE_GPU();
  const CUcontext ctx = GpuContext::get()->context();
  const runtime::DeviceLimits limits = Engine::Impl::query_limits(ctx);
  const NormProblem problem = make_problem(NormKind::LayerNorm, 4096, DType::BF16, DType::F32, Affine::WeightAndBias);
  const int64_t m = 150;
  RowStrides padded;
  padded.x = 4096 + 24;
  padded.dy = 4096 + 8;
  padded.dx = 4100;
  for (int variant = 0; variant < 2; ++variant) {
    const NormInputs inputs = variant == 0 ? make_inputs(problem, m, fresh_seed(), padded) : make_inputs(problem, m, fresh_seed());
    RunOptions options;
    options.misalign_elements = variant == 1 ? 1 : 0;
    const DeviceCase probe(inputs, options);  // the alignment the call derives from its pointers
    const NormProblem resolved = runtime::check_backward_call(inputs.problem, probe.args()).problem;
    const codegen::LaunchConfig c = codegen::column_pass_config(resolved, 256, 32);
    SCOPED_TRACE(describe_case(inputs) + " with " + codegen::describe(c) + (variant ? ", shifted by one element" : ""));
    Engine engine(config(TuneMode::Cached));
    engine.impl().pin_config(limits, resolved, m, c);
    ASSERT_EQ(engine.impl().kernel_for(ctx, resolved, m).config, c);
    Gradients first;
    ASSERT_NO_THROW(first = run_backward_on_gpu(engine, inputs, stream(), options));
    EXPECT_TRUE(gradients_match(inputs, first, reference_backward(inputs)));
    for (int run = 0; run < 3; ++run) {
      Gradients again;
      ASSERT_NO_THROW(again = run_backward_on_gpu(engine, inputs, stream(), options));
      EXPECT_TRUE(same_bits(first, again)) << "run " << run + 2;
    }
  }
}

}  // namespace
}  // namespace normjit::test
