// Rows too long for a thread-block cluster (N > 262144 in 16-bit types, > 131072 in fp32) are
// shared by a grid cluster: one cooperative launch of one block per SM, each owning a column
// slice of every row, meeting in global memory once per row. The matrix test skips most of
// these shapes (M·N > 2^24); here they run with several rows, odd N, from a captured graph,
// and bit-identically twice.
#include <gtest/gtest.h>

#include <cstring>
#include <tuple>

#include "codegen/launch_config.h"
#include "codegen/norm_problem.h"
#include "runtime/cuda_driver.h"
#include "runtime/engine_impl.h"
#include "runtime/tuner.h"
#include "support/device_run.h"
#include "support/problem_variants.h"
#include "support/random.h"
#include "support/reference.h"
#include "support/scratch_cache.h"
#include "support/shared_engine.h"

namespace normjit::test {
namespace {

using runtime::driver;

struct GridCase {
  ProblemSpec spec;
  int64_t m;
};

// N = 1048577 and 2000001 are odd: 16-bit rows aligned to 2 bytes, staged with a shift.
constexpr GridCase kCases[] = {
    {{NormKind::LayerNorm, DType::BF16, DType::F32, Affine::WeightAndBias, 1048576}, 1},
    {{NormKind::LayerNorm, DType::BF16, DType::F32, Affine::WeightAndBias, 1048576}, 6},
    {{NormKind::RMSNorm, DType::BF16, DType::F32, Affine::WeightOnly, 1048576}, 5},
    {{NormKind::LayerNorm, DType::F16, DType::F16, Affine::WeightAndBias, 1048576}, 3},
    {{NormKind::LayerNorm, DType::F32, DType::F32, Affine::WeightAndBias, 1048576}, 3},
    {{NormKind::RMSNorm, DType::F32, DType::F32, Affine::None, 1048576}, 2},
    {{NormKind::LayerNorm, DType::BF16, DType::BF16, Affine::BiasOnly, 1048577}, 3},
    {{NormKind::RMSNorm, DType::F16, DType::F32, Affine::WeightOnly, 2000001}, 2},
};

// The config the engine runs for these inputs (the alignment it derives included).
codegen::LaunchConfig config_run(Engine& engine, const NormInputs& inputs) {
  const NormProblem resolved = resolved_problem(inputs);
  CUcontext ctx;
  NJ_CU(driver().cuCtxGetCurrent(&ctx), "test: the current context");
  return engine.impl().kernel_for(ctx, resolved, inputs.m).config;
}

class BackwardGridCluster : public GpuTest {};
class BackwardGridStaging : public ScratchCacheGpuTest {};

// Every grid candidate the tuner may time (3, 5 and 8 stages where they fit: 1, 3 and 6 rows
// waiting for the other blocks' sums) matches the reference, where the ring of meeting slots
// wraps many times (64 rows), at few rows, in 16-bit and fp32, odd N.
TEST_F(BackwardGridStaging, EveryGridCandidateMatchesTheReference) {
  NJ_REQUIRE_GPU();
  const CUcontext ctx = GpuContext::get()->context();
  const runtime::DeviceLimits limits = Engine::Impl::query_limits(ctx);
  if (limits.sm < 80) GTEST_SKIP() << "grid clusters stage their rows with cp.async on sm_80 and newer";
  const GridCase cases[] = {
      {{NormKind::LayerNorm, DType::BF16, DType::F32, Affine::WeightAndBias, 1048576}, 64},
      {{NormKind::RMSNorm, DType::F16, DType::F16, Affine::WeightOnly, 1048576}, 7},
      {{NormKind::LayerNorm, DType::F32, DType::F32, Affine::WeightAndBias, 524288}, 19},
      {{NormKind::LayerNorm, DType::BF16, DType::BF16, Affine::BiasOnly, 1048577}, 5},
  };
  int tried = 0;
  for (const GridCase& gc : cases) {
    const NormInputs inputs = make_inputs(gc.spec.problem(), gc.m, fresh_seed());
    const NormProblem resolved = resolved_problem(inputs);
    std::vector<codegen::LaunchConfig> grids;
    for (const codegen::LaunchConfig& c : runtime::candidate_configs(resolved, limits, gc.m, codegen::Pass::Backward))
      if (c.grid) grids.push_back(c);
    EXPECT_FALSE(grids.empty()) << describe_case(inputs);
    each_config_matches_reference(limits, gc.spec.problem(), resolved, gc.m, grids);
    tried += static_cast<int>(grids.size());
  }
  EXPECT_GE(tried, 12);
}

TEST_F(BackwardGridCluster, LongRowsMatchTheFloat64ReferenceWithEitherWorkspace) {
  Engine& engine = shared_engine();
  for (const GridCase& gc : kCases) {
    const NormInputs inputs = make_inputs(gc.spec.problem(), gc.m, fresh_seed());
    SCOPED_TRACE(describe_case(inputs));
    const codegen::LaunchConfig config = config_run(engine, inputs);
    EXPECT_TRUE(config.grid) << "the case should take a grid cluster: " << codegen::describe(config);
    for (bool caller_workspace : {false, true}) {
      RunOptions options;
      options.caller_workspace = caller_workspace;
      EXPECT_TRUE(backward_matches_reference(engine, inputs, stream(), options))
          << (caller_workspace ? "caller's workspace" : "stream-ordered workspace");
    }
  }
}

// Session 58's rules (codegen/launch_config.cpp: wide_cluster_config, grid_for_few_rows): few
// long rows spread over the grid, rows just past what a cluster of 16 holds at 16 elements a
// thread in the grid at few rows or when aligned to less, and many of them, aligned, in a
// cluster of 16 blocks at up to 24 elements a thread (20 for LayerNorm's fp32 rows; RMSNorm's
// 16-bit rows aligned to less in realigned slots).
struct RuleCase {
  ProblemSpec spec;
  int64_t m;
  bool grid;  // else the cluster of 16 at more than 16 elements a thread
};
constexpr RuleCase kRuleCases[] = {
    {{NormKind::LayerNorm, DType::BF16, DType::F32, Affine::WeightAndBias, 262144}, 8, true},
    {{NormKind::RMSNorm, DType::BF16, DType::F32, Affine::WeightOnly, 131072}, 4, true},
    {{NormKind::LayerNorm, DType::BF16, DType::F32, Affine::WeightAndBias, 65536}, 3, true},
    {{NormKind::LayerNorm, DType::F32, DType::F32, Affine::WeightAndBias, 65536}, 1, true},
    {{NormKind::RMSNorm, DType::F16, DType::F16, Affine::WeightOnly, 262144}, 5, true},
    {{NormKind::LayerNorm, DType::BF16, DType::F32, Affine::WeightAndBias, 262152}, 2, true},
    {{NormKind::LayerNorm, DType::BF16, DType::F32, Affine::WeightAndBias, 262145}, 40, true},
    {{NormKind::LayerNorm, DType::BF16, DType::F32, Affine::WeightAndBias, 262152}, 33, false},
    {{NormKind::RMSNorm, DType::BF16, DType::F32, Affine::WeightOnly, 393216}, 40, false},
    {{NormKind::LayerNorm, DType::BF16, DType::BF16, Affine::BiasOnly, 300000}, 21, false},
    {{NormKind::LayerNorm, DType::F16, DType::F16, Affine::WeightAndBias, 327680}, 17, false},
    {{NormKind::LayerNorm, DType::F32, DType::F32, Affine::WeightAndBias, 327680}, 33, false},
    {{NormKind::RMSNorm, DType::F32, DType::F32, Affine::WeightOnly, 393216}, 20, false},
    // RMSNorm's 16-bit rows aligned to 2 bytes: the wide cluster in realigned slots, the grid at few.
    {{NormKind::RMSNorm, DType::BF16, DType::F32, Affine::WeightOnly, 300001}, 40, false},
    {{NormKind::RMSNorm, DType::F16, DType::F16, Affine::WeightOnly, 262147}, 33, false},
    {{NormKind::RMSNorm, DType::BF16, DType::BF16, Affine::WeightOnly, 327681}, 3, true},
    {{NormKind::RMSNorm, DType::F16, DType::F32, Affine::WeightOnly, 300001}, 24, true},
};

TEST_F(BackwardGridCluster, FewLongRowsAndRowsPastAClusterOf16MatchTheReference) {
  Engine& engine = shared_engine();
  for (const RuleCase& rc : kRuleCases) {
    const NormInputs inputs = make_inputs(rc.spec.problem(), rc.m, fresh_seed());
    SCOPED_TRACE(describe_case(inputs));
    const codegen::LaunchConfig config = config_run(engine, inputs);
    if (rc.grid)
      EXPECT_TRUE(config.grid) << codegen::describe(config);
    else
      EXPECT_TRUE(config.cluster == 16 && config.shared_sums && !config.grid &&
                  codegen::elements_per_thread(resolved_problem(inputs), config) > 16)
          << codegen::describe(config);
    EXPECT_TRUE(backward_matches_reference(engine, inputs, stream()));
  }
  // Bit-identical dγ/dβ (and dx) from run to run in the widest cluster.
  const RuleCase& widest = kRuleCases[11];  // LayerNorm fp32 327680: 20 elements a thread
  EXPECT_TRUE(same_bits_twice(engine, make_inputs(widest.spec.problem(), widest.m, fresh_seed()), stream()));
}

TEST_F(BackwardGridCluster, RepeatedRunsGiveIdenticalBits) {
  Engine& engine = shared_engine();
  const NormInputs inputs =
      make_inputs(make_problem(NormKind::LayerNorm, 1048576, DType::BF16, DType::F32, Affine::WeightAndBias), 7,
                  fresh_seed());
  const Gradients first = run_backward_on_gpu(engine, inputs, stream());
  for (int run = 0; run < 4; ++run) {
    const Gradients again = run_backward_on_gpu(engine, inputs, stream());
    for (auto [name, a, b] : {std::tuple{"dx", &first.dx, &again.dx}, std::tuple{"dweight", &first.dweight, &again.dweight},
                              std::tuple{"dbias", &first.dbias, &again.dbias}})
      EXPECT_EQ(std::memcmp(a->data(), b->data(), a->size_bytes()), 0) << name << " differs in run " << run + 2;
  }
}

TEST_F(BackwardGridCluster, RunsFromACapturedGraph) {
  Engine& engine = shared_engine();
  const NormInputs inputs =
      make_inputs(make_problem(NormKind::RMSNorm, 1048576, DType::BF16, DType::F32, Affine::WeightOnly), 4,
                  fresh_seed());
  DeviceCase device(inputs, {});
  const BackwardArgs args = device.args();
  engine.backward(inputs.problem, args, stream());  // compile and load outside the capture
  NJ_CU(driver().cuStreamSynchronize(stream()), "test: warm-up");
  device.poison_outputs();
  const auto& d = driver();
  CUgraph graph;
  CUgraphExec exec;
  NJ_CU(d.cuStreamBeginCapture(stream(), CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), "test: capture");
  engine.backward(inputs.problem, args, stream());
  NJ_CU(d.cuStreamEndCapture(stream(), &graph), "test: capture");
  NJ_CU(d.cuGraphInstantiateWithFlags(&exec, graph, 0), "test: instantiate");
  for (int replay = 0; replay < 2; ++replay) {  // the arrival counter is cleared in every replay
    device.poison_outputs();
    NJ_CU(d.cuGraphLaunch(exec, stream()), "test: replay");
    NJ_CU(d.cuStreamSynchronize(stream()), "test: replay");
    EXPECT_TRUE(gradients_match(inputs, device.download(), reference_backward(inputs))) << "replay " << replay + 1;
  }
  d.cuGraphExecDestroy(exec);
  d.cuGraphDestroy(graph);
}

}  // namespace
}  // namespace normjit::test
