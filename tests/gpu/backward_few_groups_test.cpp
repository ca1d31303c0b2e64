// The configs the engine picks for many rows, run over only two row groups. A persistent
// backward's blocks (or clusters) loop over rows; what changes from one row to the next —
// buffers and stages reused, sums carried in shared memory, the next row prefetched — only
// happens in a block that works several rows. At M = 199 or 4096 the engine launches a group
// per resident block, so compute-sanitizer's racecheck, which caps M·N (scripts/gpu-sanitize.sh:
// 2^18, it tracks every shared-memory access), never ran those configs at N > 1000. Here each
// is told that two groups are resident (LoadedKernel::resident_groups), so a few rounds of
// rows (6 slots of rows, less one: the last round uneven) put every block through its loop at
// an M·N racecheck can afford, and the result must match the float64 reference.
// The sanitize matrix's problems (tests/gpu/backward_matrix_test.cpp): LayerNorm (γ, β) and
// RMSNorm (γ), fp32 weights, x in fp32, fp16, bf16, N in {1, 33, 1000, 4096, 8192, 65536,
// 262144}, 32768 and 1280-16384 (kHiddenSizes), each distinct config of M = 199 and 4096 once;
// and at those N the fused options. Then every variant the library lists at N = 33, 4096 and 65536.
#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "codegen/launch_config.h"
#include "runtime/backward_call.h"
#include "runtime/cuda_driver.h"
#include "runtime/engine_impl.h"
#include "runtime/launch_plan.h"
#include "support/device_run.h"
#include "support/fused_cases.h"
#include "support/gpu.h"
#include "support/kernel_warmup.h"
#include "support/norm_inputs.h"
#include "support/problem_variants.h"
#include "support/random.h"
#include "support/reference.h"
#include "support/shared_engine.h"

namespace normjit::test {
namespace {

// The sanitize matrix's N, 32768 (the fused options' own cluster configs), and widths where
// fused problems have rules of their own (launch_config.cpp): 1280 and 2560 (blocks of N/8
// threads), 5120, 14336 and 16384 (pairs of blocks, prefetching gates, shared sums in place of
// RMSNorm's half vectors); 12288, where memory-rich devices (an H200) prefetch one block of 768
// threads with shared sums (the matrix runs 12288 at few rows only); 1128 and 1768, where
// memory-rich devices pair 16-bit rows (LayerNorm in one block, then in a cluster of two; RMSNorm
// in one block), and 1000, where they take a warp a row.
// 935, 1021, 1201, 1901 (odd, so in phase; RMSNorm's phased at 1201 and 1901): LayerNorm's rows
// of an element in blocks of 64 held to 96 registers (935, 1021), of 96 (1201), of 128 (1901:
// bf16's prefetching, fp16's five an SM), of 160 (fp16's 2553, four an SM), of 192 (3001) and
// of 224 widened to 256 (3329, three an SM);
// RMSNorm's warp a row of them (1021); 1024, 1536, 6656 LayerNorm's paired rows (fp16 1024 one
// block, else a cluster of two).
constexpr int64_t kHiddenSizes[] = {1,    33,   935,  1000, 1021, 1024, 1128,  1201,  1280,  1536,  1768,  3001,  1901,
                                    2553, 2560, 3329, 4096, 5120, 6656, 8192, 12288, 14336, 16384, 32768, 65536, 262144};
constexpr int64_t kManyRows[] = {199, 4096};
constexpr int64_t kGroups = 2;  // row groups the launch is told are resident
constexpr int64_t kRounds = 3;  // rows per group slot, the last one short of a full round

// Row groups the launch is told are resident for config c: kGroups, but for phased configs,
// whose groups each take rows of one phase, which repeats every c.vec rows: c.vec of them
// (runtime::row_groups makes a multiple of c.vec groups, or a group a row).
int64_t resident_for(const codegen::LaunchConfig& c) { return c.phased ? c.vec : kGroups; }

// Rows that give each of those groups kRounds rounds of its slot (rows a block, or a merged
// cluster, takes at once), the last round one row short.
int64_t rows_for(const codegen::LaunchConfig& c) {
  return resident_for(c) * kRounds * int64_t{c.rows_per_block()} * c.merge - 1;
}

struct Case {
  NormProblem problem;
  FusedSpec spec;
};

// Runs each case over rows_for(config) rows with the config the engine picks for each of
// kManyRows (each distinct one once), told that resident_for's groups are resident, against the
// reference. Returns how many runs there were.
int run_over_two_groups(const std::vector<Case>& cases, CUstream stream) {
  Engine& engine = shared_engine();
  const CUcontext ctx = GpuContext::get()->context();
  // Contiguous rows: the alignment any call with these inputs resolves to.
  std::vector<NormProblem> resolved;
  for (const Case& c : cases) resolved.push_back(resolved_problem(make_inputs(c.problem, 2, fresh_seed(), {}, c.spec)));
  // Compiled from 8 threads at once (NVRTC dominates: one at a time takes minutes). A kernel that
  // fails here fails again in the test's own kernel_for below, which reports it.
  load_in_parallel(engine, resolved, {std::begin(kManyRows), std::end(kManyRows)});
  int ran = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const NormProblem& problem = cases[i].problem;
    std::set<std::string> seen;
    for (const int64_t many : kManyRows) {
      const LoadedKernel& chosen = engine.impl().kernel_for(ctx, resolved[i], many);
      if (!seen.insert(codegen::describe(chosen.config)).second) continue;
      LoadedKernel few = chosen;  // the same module, told that two groups (phased: c.vec) are resident
      few.resident_groups = std::min<int64_t>(few.resident_groups, resident_for(chosen.config));
      const int64_t m = rows_for(chosen.config);
      const NormInputs inputs = make_inputs(problem, m, fresh_seed(), {}, cases[i].spec);
      const std::string what = describe_problem(problem) + " with M=" + std::to_string(many) + "'s config " +
                               codegen::describe(chosen.config) + ", run on M=" + std::to_string(m);
      // A grid cluster is one group whatever the rows, the column pass a group (a float2 of
      // sums) per row whatever is resident; every other config must get resident_for's.
      const int64_t groups = chosen.config.grid ? 1 : chosen.config.column_pass > 0 ? m : resident_for(chosen.config);
      EXPECT_EQ(runtime::row_groups(few.config, few.limits, m, few.resident_groups), groups) << what;

      DeviceCase device(inputs, RunOptions{});
      device.poison_outputs();
      const runtime::CheckedCall call = runtime::check_backward_call(inputs.problem, device.args());
      EXPECT_EQ(call.problem.alignment, resolved[i].alignment) << what;
      Engine::Impl::launch(few, call.problem, call.args, stream);
      NJ_CU(runtime::driver().cuStreamSynchronize(stream), "test: waiting for the backward");
      EXPECT_TRUE(gradients_match(inputs, device.download(), reference_backward(inputs))) << what;
      ++ran;
    }
  }
  return ran;
}

// One test per N, so that a sanitizer's run can take them a few at a time
// ("EveryN/BackwardFewGroups.*/N262144").
class BackwardFewGroups : public GpuTest, public ::testing::WithParamInterface<int64_t> {};

TEST_P(BackwardFewGroups, ManyRowConfigsMatchTheReference) {
  NJ_REQUIRE_GPU();
  std::vector<Case> cases;
  for (const Variant& v : sanitize_variants()) cases.push_back({v.problem(GetParam()), {}});
  // At least one config per problem; more where M = 199 and 4096 pick different ones.
  EXPECT_GE(run_over_two_groups(cases, stream()), 6);
}

// The same with the fused options on: residual, zero-centred γ, row scale and a dropout mask of
// bytes together; the residual alone; parallel norms; recompute from the output; RMSNorm gated both ways.
TEST_P(BackwardFewGroups, ManyRowConfigsWithFusedOptionsMatchTheReference) {
  NJ_REQUIRE_GPU();
  const int64_t n = GetParam();
  std::vector<Case> cases;
  for (DType x : {DType::BF16, DType::F32}) {
    for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm}) {
      NormProblem all = fused_base_problem(kind, n, x);
      all.residual = all.zero_centered_weight = all.rowscale = true;
      all.dropout = DropoutMask::Bytes;
      cases.push_back({all, FusedSpec{0.5, true, 0}});
      // The residual alone: memory-rich devices give it the option-free rows' prefetching rules.
      NormProblem residual = fused_base_problem(kind, n, x);
      residual.residual = true;
      cases.push_back({residual, {}});
    }
    for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm}) {
      NormProblem parallel = fused_base_problem(kind, n, x);
      parallel.parallel = true;
      cases.push_back({parallel, {}});
    }
    NormProblem recompute = fused_base_problem(NormKind::LayerNorm, n, x);
    recompute.recompute_from_output = true;
    cases.push_back({recompute, {}});
    for (Gate gate : {Gate::AfterNorm, Gate::BeforeNorm}) {
      NormProblem gated = fused_base_problem(NormKind::RMSNorm, n, x);
      gated.gate = gate;
      cases.push_back({gated, {}});
    }
  }
  EXPECT_GE(run_over_two_groups(cases, stream()), 18);  // 9 problems, 2 dtypes: a config each at least
}

// Every variant the library lists (γ/β in x's dtype, γ or β alone, neither; the sanitize
// matrix has fp32 γ with β for LayerNorm only), at one N of each family: several rows a block
// (33), a row a block (4096) and a cluster (65536).
class BackwardFewGroupsVariants : public GpuTest {};

TEST_F(BackwardFewGroupsVariants, EveryVariantMatchesTheReference) {
  NJ_REQUIRE_GPU();
  std::vector<Case> cases;
  for (const int64_t n : {33, 4096, 65536})
    for (const Variant& v : every_variant()) cases.push_back({v.problem(n), {}});
  EXPECT_GE(run_over_two_groups(cases, stream()), 78);  // 26 variants, 3 N: a config each at least
}

INSTANTIATE_TEST_SUITE_P(EveryN, BackwardFewGroups, ::testing::ValuesIn(kHiddenSizes),
                         [](const ::testing::TestParamInfo<int64_t>& info) { return "N" + std::to_string(info.param); });

}  // namespace
}  // namespace normjit::test
