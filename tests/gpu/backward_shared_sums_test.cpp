// Shared sums (LaunchConfig::shared_sums): each thread sums its columns' dγ/dβ in its own
// region of its block's shared memory instead of in registers. Every shared-sums candidate the
// tuner may pick must match the reference: one block a row and clusters sharing it, staged rows,
// 16-bit and fp32, odd N (rows aligned to 2 bytes, part-filled vectors), the fused options that
// add sums of their own (parallel norms) or change what is summed (recompute, the gate in both
// orders, whose z packed rows hold too), one row group writing dγ/dβ itself, and many rows a
// block, which is where the sums accumulate.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>

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

NormProblem with(NormProblem p, void (*option)(NormProblem&)) {
  option(p);
  return p;
}

std::vector<NormProblem> problems() {
  return {
      make_problem(NormKind::LayerNorm, 8192, DType::BF16, DType::F32, Affine::WeightAndBias),
      make_problem(NormKind::RMSNorm, 4096, DType::F16, DType::F16, Affine::WeightOnly),
      make_problem(NormKind::LayerNorm, 32768, DType::BF16, DType::F32, Affine::WeightAndBias),  // clusters
      make_problem(NormKind::LayerNorm, 16384, DType::F32, DType::F32, Affine::BiasOnly),
      // fp32 clusters of 512-thread blocks or smaller, several an SM (many rows, 16385-32768).
      make_problem(NormKind::RMSNorm, 20480, DType::F32, DType::F32, Affine::WeightOnly),
      make_problem(NormKind::LayerNorm, 24576, DType::F32, DType::F32, Affine::WeightAndBias),
      make_problem(NormKind::LayerNorm, 36864, DType::F32, DType::F32, Affine::WeightAndBias),  // 16 a thread
      // 16 a thread in a cluster of 8 on memory-rich devices, spilling (57345-65536).
      make_problem(NormKind::LayerNorm, 61440, DType::F32, DType::F32, Affine::WeightAndBias),
      // One 16-bit row a block of N/16 threads, several an SM (many rows, 2049-4095).
      make_problem(NormKind::LayerNorm, 3584, DType::BF16, DType::F32, Affine::WeightAndBias),
      make_problem(NormKind::LayerNorm, 5003, DType::BF16, DType::BF16, Affine::WeightAndBias),  // odd, staged
      make_problem(NormKind::RMSNorm, 1000, DType::F32, DType::F32, Affine::WeightOnly),
      // One block of 768 threads prefetching with shared sums: memory-rich devices' rule (an H200).
      make_problem(NormKind::LayerNorm, 12288, DType::BF16, DType::F32, Affine::WeightAndBias),
      with(make_problem(NormKind::LayerNorm, 8192, DType::BF16, DType::F32, Affine::WeightAndBias),
           [](NormProblem& p) { p.parallel = true; }),
      // Packed rows holding dy1 (kHoldsSecondDy): LayerNorms above, and rows clusters share.
      with(make_problem(NormKind::RMSNorm, 32768, DType::F16, DType::F32, Affine::WeightOnly),
           [](NormProblem& p) { p.parallel = true; }),
      with(make_problem(NormKind::LayerNorm, 4096, DType::BF16, DType::F32, Affine::WeightAndBias),
           [](NormProblem& p) { p.recompute_from_output = true; }),
      with(make_problem(NormKind::RMSNorm, 4096, DType::BF16, DType::F32, Affine::WeightOnly),
           [](NormProblem& p) { p.gate = Gate::AfterNorm; }),
      // Packed rows hold the gate's z beside x and dy (kHoldsGate): both orders, in a block and
      // in clusters sharing the row.
      with(make_problem(NormKind::RMSNorm, 8192, DType::F16, DType::F32, Affine::WeightOnly),
           [](NormProblem& p) { p.gate = Gate::BeforeNorm; }),
      with(make_problem(NormKind::RMSNorm, 32768, DType::BF16, DType::BF16, Affine::WeightOnly),
           [](NormProblem& p) { p.gate = Gate::AfterNorm; }),
  };
}
// 1: one row group, dγ/dβ written by the main kernel; 700: several rows per block on the H100.
// Under a sanitizer (NORMJIT_TEST_MATRIX=sanitize) the many-rows case keeps M·N within
// NORMJIT_TEST_MAX_ELEMENTS, but at least 3 rows a block's worth of sums to accumulate.
constexpr int64_t kRows[] = {1, 700};

class BackwardSharedSums : public ScratchCacheGpuTest {};

// A case a problem, so that gtest's shards share them out (as one test they took 134-295 s of
// one shard: the suite's longest, session 60).
class BackwardSharedSumsCandidates : public ScratchCacheGpuTest, public ::testing::WithParamInterface<size_t> {};

TEST_P(BackwardSharedSumsCandidates, EveryOneMatchesTheReference) {
  NJ_REQUIRE_GPU();
  const CUcontext ctx = GpuContext::get()->context();
  const runtime::DeviceLimits limits = Engine::Impl::query_limits(ctx);
  if (limits.sm < 80)
    GTEST_SKIP() << "shared-sums candidates are tried on sm_80 and newer, this GPU is sm_" << limits.sm;
  const NormProblem problem = problems().at(GetParam());
  for (const int64_t rows : kRows) {
    const int64_t m = sanitize_rows(rows, problem.n);
    // Contiguous rows: the alignment the call will derive, so the database entry is the one used.
    const NormProblem resolved = resolved_problem(make_inputs(problem, m, fresh_seed()));
    std::vector<codegen::LaunchConfig> configs;
    for (const codegen::LaunchConfig& c : runtime::candidate_configs(resolved, limits, m, codegen::Pass::Backward))
      // Rows copied ahead and paired rows: their own tests (BackwardSharedPrefetch, BackwardPairedRows).
      if (c.shared_sums && c.shared_prefetch == 0 && !c.paired_rows) configs.push_back(c);
    each_config_matches_reference(limits, problem, resolved, m, configs);
    EXPECT_FALSE(configs.empty()) << describe_problem(problem) << " M=" << m << ": no shared-sums candidate";
  }
}

INSTANTIATE_TEST_SUITE_P(Problems, BackwardSharedSumsCandidates, ::testing::Range<size_t>(0, problems().size()),
                         [](const ::testing::TestParamInfo<size_t>& info) {
                           const NormProblem p = problems().at(info.param);
                           std::string name = std::string(kind_label(p.kind)) + "_" + dtype_label(p.x_dtype) + "_weight" +
                                              dtype_label(p.weight_dtype) + "_N" + std::to_string(p.n);
                           std::string option;  // " +gate=after-norm" → "_gateafternorm"
                           for (const char ch : fused_label(p))
                             if (std::isalnum(static_cast<unsigned char>(ch))) option += ch;
                           return option.empty() ? name : name + "_" + option;
                         });

// The same inputs through a shared-sums config twice give the same bits: each thread's sums are
// its own (no race in shared memory), added in row order; so do the rows copied ahead (shared-sums
// candidates too), whose threads read back only the pieces they copied. In one block a row (8192)
// and in clusters (16384). (The bits differ from the config with its sums in registers: that
// one's grid has other row groups, and packed rows recompute x̂ and dy·γ for dx, which the
// compiler may contract differently.)
TEST_F(BackwardSharedSums, TheSameBitsTwice) {
  NJ_REQUIRE_GPU();
  const CUcontext ctx = GpuContext::get()->context();
  const runtime::DeviceLimits limits = Engine::Impl::query_limits(ctx);
  if (limits.sm < 80)
    GTEST_SKIP() << "shared-sums candidates are tried on sm_80 and newer, this GPU is sm_" << limits.sm;
  int compared = 0, copied_ahead = 0;
  for (const int64_t n : {8192, 16384}) {
    const NormProblem problem = make_problem(NormKind::LayerNorm, n, DType::BF16, DType::F32, Affine::WeightAndBias);
    const int64_t m = sanitize_rows(1000, n);
    const NormInputs inputs = make_inputs(problem, m, fresh_seed());
    const NormProblem resolved = resolved_problem(inputs);
    for (const codegen::LaunchConfig& c : runtime::candidate_configs(resolved, limits, m, codegen::Pass::Backward)) {
      if (!c.shared_sums) continue;
      const std::unique_ptr<Engine> engine = pinned_engine(limits, resolved, m, c);
      ASSERT_EQ(engine->impl().kernel_for(ctx, resolved, m).config, c) << codegen::describe(c);
      EXPECT_TRUE(same_bits_twice(*engine, inputs, stream())) << codegen::describe(c);
      ++compared;
      copied_ahead += c.shared_prefetch > 0;
    }
  }
  EXPECT_GE(compared, 6);
  EXPECT_GE(copied_ahead, 3);
}

}  // namespace
}  // namespace normjit::test
