// The backward is deterministic: dγ and dβ are summed as per-row-group partial rows, added in
// group order, never with atomics; so the same inputs give the same bits on every run, with
// either workspace, from a freshly built engine (its own compilation of the kernels), and with
// any SM margin (a smaller grid whose blocks work several row groups each).
#include <gtest/gtest.h>

#include <set>
#include <tuple>

#include "codegen/launch_config.h"
#include "runtime/engine_impl.h"
#include "runtime/launch_plan.h"
#include "runtime/tuner.h"
#include "support/device_run.h"
#include "support/problem_variants.h"
#include "support/random.h"
#include "support/reference.h"
#include "support/scratch_cache.h"
#include "support/shared_engine.h"

namespace normjit::test {
namespace {

constexpr int kRepeats = 5;

struct DeterminismCase {
  NormKind kind;
  DType x, weight;
  Affine affine;
  int64_t m, n;
};

constexpr DeterminismCase kCases[] = {
    {NormKind::LayerNorm, DType::BF16, DType::F32, Affine::WeightAndBias, 4096, 1024},  // many rows per block
    {NormKind::LayerNorm, DType::F16, DType::F16, Affine::WeightAndBias, 199, 5120},
    {NormKind::RMSNorm, DType::F32, DType::F32, Affine::WeightOnly, 4096, 4096},
    {NormKind::RMSNorm, DType::BF16, DType::F32, Affine::WeightOnly, 37, 262144},  // a staged cluster of 16
    // Few rows: a block per row, each writing its partial row of dγ/dβ as vector stores, which
    // the reduction adds in group order (merged blocks: backward_merge_test.cpp).
    {NormKind::LayerNorm, DType::BF16, DType::F32, Affine::WeightAndBias, 37, 4096},
    {NormKind::RMSNorm, DType::BF16, DType::F32, Affine::WeightOnly, 199, 8192},
    // Phased rows (odd N, contiguous, in clusters): each row group's partial row written element
    // by element at its phase's columns.
    {NormKind::LayerNorm, DType::BF16, DType::F32, Affine::WeightAndBias, 301, 30001},
    {NormKind::RMSNorm, DType::F16, DType::F16, Affine::WeightOnly, 4096, 16383},
};

class BackwardDeterminism : public GpuTest {};

TEST_F(BackwardDeterminism, RepeatedRunsAndAFreshEngineGiveIdenticalBits) {
  Engine& engine = shared_engine();
  Config fresh_config;
  fresh_config.disk_cache = false;  // compiles its kernels anew
  Engine fresh_engine(fresh_config);

  for (const DeterminismCase& dc : kCases) {
    const NormInputs inputs = make_inputs(make_problem(dc.kind, dc.n, dc.x, dc.weight, dc.affine), dc.m, fresh_seed());
    Gradients first;
    ASSERT_NO_THROW(first = run_backward_on_gpu(engine, inputs, stream())) << describe_case(inputs);
    ASSERT_TRUE(gradients_match(inputs, first, reference_backward(inputs)));
    for (int run = 1; run < kRepeats; ++run) {
      RunOptions options;
      options.caller_workspace = run % 2 == 1;
      Gradients again;
      ASSERT_NO_THROW(again = run_backward_on_gpu(engine, inputs, stream(), options)) << describe_case(inputs);
      EXPECT_TRUE(same_bits(first, again)) << "run " << run + 1 << " of " << describe_case(inputs);
    }
    Gradients from_fresh_engine;
    ASSERT_NO_THROW(from_fresh_engine = run_backward_on_gpu(fresh_engine, inputs, stream())) << describe_case(inputs);
    EXPECT_TRUE(same_bits(first, from_fresh_engine)) << "fresh engine, " << describe_case(inputs);
  }
}


// One config of each kind the search space holds for a problem (the heuristic's, rows in
// registers, several rows a block, merged blocks, clusters, shared sums, staged, streamed, the
// column pass).
std::vector<codegen::LaunchConfig> one_of_each_kind(const NormProblem& resolved, const runtime::DeviceLimits& limits,
                                                   int64_t m) {
  std::vector<codegen::LaunchConfig> out = {codegen::choose_launch_config(resolved, limits.sm, limits.sm_count, m, limits.memory_bytes_per_sm_cycle),
                                            codegen::streamed_launch_config(resolved)};
  std::set<std::tuple<bool, bool, bool, bool, bool, bool, bool>> kinds;
  for (const codegen::LaunchConfig& c : runtime::candidate_configs(resolved, limits, m, codegen::Pass::Backward))
    if (!c.grid && kinds.insert({c.staged, c.shared_sums, c.merge > 1, c.cluster > 1, c.rows_per_block() > 1,
                                 c.prefetch, c.column_pass > 0}).second)
      out.push_back(c);
  return out;
}

struct MarginCase {
  NormProblem problem;
  int64_t m;
};

// An SM margin shrinks the grid: the row groups are split over several launches in turn, each
// told which groups it holds, so the partial rows, and every bit of dγ, dβ and dx, stay those of
// one whole launch. Every kind of config, at margins leaving half the SMs and one SM's share.
class BackwardSmMargin : public ScratchCacheGpuTest {};

TEST_F(BackwardSmMargin, AnySmMarginGivesIdenticalBits) {
  NJ_REQUIRE_GPU();
  const CUcontext ctx = GpuContext::get()->context();
  const runtime::DeviceLimits limits = Engine::Impl::query_limits(ctx);
  NormProblem parallel = make_problem(NormKind::LayerNorm, 4096, DType::F32, DType::F32, Affine::WeightAndBias);
  parallel.parallel = true;
  const MarginCase cases[] = {
      {make_problem(NormKind::LayerNorm, 1024, DType::BF16, DType::F32, Affine::WeightAndBias), 3000},
      {make_problem(NormKind::RMSNorm, 8192, DType::F16, DType::F16, Affine::WeightOnly), 700},
      {parallel, 600},
      {make_problem(NormKind::LayerNorm, 5003, DType::BF16, DType::BF16, Affine::WeightAndBias), 400},
      {make_problem(NormKind::LayerNorm, 65536, DType::BF16, DType::F32, Affine::WeightAndBias), 48},
      {make_problem(NormKind::RMSNorm, 4096, DType::BF16, DType::F32, Affine::WeightOnly), 24},  // few rows: merges
  };
  const int margins[] = {limits.sm_count / 2, limits.sm_count - 1};
  int shrunk = 0;
  for (const MarginCase& mc : cases) {
    const NormInputs inputs = make_inputs(mc.problem, mc.m, fresh_seed());
    const NormProblem resolved = resolved_problem(inputs);
    const auto reference = reference_backward(inputs);
    for (const codegen::LaunchConfig& c : one_of_each_kind(resolved, limits, mc.m)) {
      SCOPED_TRACE(describe_case(inputs) + " with " + codegen::describe(c));
      Engine whole(config(TuneMode::Cached));
      whole.impl().pin_config(limits, resolved, mc.m, c);
      const LoadedKernel& k = whole.impl().kernel_for(ctx, resolved, mc.m);
      ASSERT_EQ(k.config, c);
      const int64_t groups = runtime::row_groups(k.config, k.limits, mc.m, k.resident_groups);
      Gradients first;
      ASSERT_NO_THROW(first = run_backward_on_gpu(whole, inputs, stream()));
      EXPECT_TRUE(gradients_match(inputs, first, reference));
      for (int margin : margins) {
        Config with_margin = config(TuneMode::Cached);
        with_margin.sm_margin = margin;
        Engine narrow(with_margin);
        narrow.impl().pin_config(limits, resolved, mc.m, c);
        const int64_t launched = runtime::groups_per_launch(c, limits, groups, margin);
        if (launched < groups) ++shrunk;
        Gradients again;
        ASSERT_NO_THROW(again = run_backward_on_gpu(narrow, inputs, stream()));
        EXPECT_TRUE(same_bits(first, again)) << "margin " << margin << ": " << launched << " of " << groups
                                             << " row groups a launch";
      }
    }
  }
  EXPECT_GE(shrunk, 20) << "launches the margins made smaller";
}

}  // namespace
}  // namespace normjit::test
