#include "runtime/launch_plan.h"

#include <gtest/gtest.h>

#include "codegen/norm_problem.h"

using namespace normjit;

namespace {
const runtime::DeviceLimits kH100{90, 132, 2048, 32, true};

NormProblem problem(int64_t n, bool weight = true, bool bias = true) {
  NormProblem p;
  p.n = n;
  p.x_dtype = DType::BF16;
  p.has_weight = weight;
  p.has_bias = bias;
  return codegen::resolve_problem(p);
}
}  // namespace

TEST(LaunchPlan, RowGroupsNeverExceedTheRows) {
  const NormProblem p = problem(4096);
  const auto c = codegen::choose_launch_config(p);
  EXPECT_EQ(runtime::row_groups(c, kH100, 1, 8 * 132), 1);
  EXPECT_EQ(runtime::row_groups(c, kH100, 37, 8 * 132), 37);
}

TEST(LaunchPlan, RowGroupsAreBoundedByResidentBlocksNotByM) {
  const NormProblem p = problem(4096);
  const auto c = codegen::choose_launch_config(p);
  EXPECT_EQ(runtime::row_groups(c, kH100, 1 << 20, 2 * 132), 2 * 132);
  EXPECT_LE(runtime::max_row_groups(c, kH100, 1 << 20), 132 * (2048 / c.threads));
}

// As few groups as take the rows in the same number of rounds: fewer partial rows, and no
// group works more rows than the busiest would have.
TEST(LaunchPlan, RowGroupsAreBalancedOverTheRounds) {
  const NormProblem p = problem(8192);
  codegen::LaunchConfig c = codegen::choose_launch_config(p, 90, 132);  // a rows family (not the column pass)
  ASSERT_EQ(c.rows_per_block(), 1);
  EXPECT_EQ(runtime::row_groups(c, kH100, 199, 132), 100) << "2 rounds: 100 groups of 2 rows, not 132";
  EXPECT_EQ(runtime::row_groups(c, kH100, 264, 132), 132);
  EXPECT_EQ(runtime::row_groups(c, kH100, 265, 132), 89) << "3 rounds: 89 groups of 2 or 3 rows";
  for (int64_t m : {1, 2, 131, 132, 133, 199, 1000, 4096, 65537})
    for (int64_t resident : {1, 7, 132, 264}) {
      const int64_t g = runtime::row_groups(c, kH100, m, resident);
      const int64_t cap = std::min<int64_t>(m, resident);
      ASSERT_GE(g, 1);
      ASSERT_LE(g, cap);
      EXPECT_EQ((m + g - 1) / g, (m + cap - 1) / cap) << m << " rows, " << resident << " resident: rounds unchanged";
    }
}

// Phased rows: a row group's rows share their phase, which repeats every vec rows, so a
// launch has a multiple of vec groups, or a group a row; however few groups fit at once.
TEST(LaunchPlan, PhasedRowsTakeAMultipleOfTheirVectorInGroups) {
  NormProblem p = problem(30001);
  p.alignment = 2;
  const codegen::LaunchConfig c = codegen::choose_launch_config(codegen::resolve_problem(p), 90, 132, 1 << 12, 18.8);
  ASSERT_TRUE(c.phased) << codegen::describe(c);
  for (int64_t m : {1, 2, 7, 8, 9, 131, 199, 1000, 13413, 65537})
    for (int64_t resident : {1, 3, 7, 132, 264, 396}) {
      const int64_t g = runtime::row_groups(c, kH100, m, resident);
      ASSERT_GE(g, 1);
      EXPECT_TRUE(g >= m || g % c.vec == 0) << m << " rows, " << resident << " resident: " << g << " groups";
      EXPECT_LE(g, std::min(m, std::max<int64_t>(resident, c.vec)));
      EXPECT_LE(g, runtime::max_row_groups(c, kH100, m)) << "the workspace covers them";
    }
}

TEST(LaunchPlan, NoPartialsWithoutWeightOrBias) {
  EXPECT_EQ(runtime::partial_bytes(problem(4096, false, false), 100), 0u);
  EXPECT_EQ(runtime::partial_bytes(problem(4096, true, false), 100), 100u * 4096 * 4);
  EXPECT_EQ(runtime::partial_bytes(problem(4096, true, true), 100), 2u * 100 * 4096 * 4);
}

// Parallel norms: the second norm's dγ1/dβ1 rows follow the first's, as many again.
TEST(LaunchPlan, ParallelNormsHaveTwiceThePartials) {
  NormProblem p = problem(4096, true, true);
  p.parallel = true;
  EXPECT_EQ(runtime::partial_floats(p, 100), 2 * 100 * 4096);
  EXPECT_EQ(runtime::partial_bytes(p, 100), 2u * 2 * 100 * 4096 * 4);
  p.has_weight = p.has_bias = false;
  EXPECT_EQ(runtime::partial_bytes(p, 100), 0u);
}

TEST(LaunchPlan, WorkspaceBoundCoversEveryLowerAlignment) {
  for (int64_t n : {1, 33, 1000, 1001, 4096, 5003, 65536}) {
    const NormProblem p = problem(n);
    const size_t bound = runtime::workspace_bound(p, kH100, 4096);
    for (int alignment = 16; alignment >= 2; alignment /= 2)
      for (bool in_phase : {true, false}) {  // phased configs, and those of rows out of phase
        NormProblem q = p;
        q.alignment = alignment;
        q.rows_in_phase = in_phase;
        const auto c = codegen::choose_launch_config(q, kH100.sm, kH100.sm_count, 4096, kH100.memory_bytes_per_sm_cycle);
        EXPECT_LE(runtime::partial_bytes(q, runtime::max_row_groups(c, kH100, 4096)), bound)
            << n << " " << alignment << " " << codegen::describe(c);
      }
  }
}

TEST(LaunchPlan, ClustersCountAsOneRowGroup) {
  const NormProblem p = problem(65536);
  const auto c = codegen::choose_launch_config(p, 90);
  ASSERT_GT(c.cluster, 1);
  EXPECT_LE(runtime::max_row_groups(c, kH100, 1 << 20), 132 * (2048 / c.threads) / c.cluster);
}

// A single row group holding its rows in registers writes dγ/dβ itself (the small-M path), so
// callers are asked for no workspace there; from two row groups on, for the partials. On
// sm_90 up to 8 merged blocks are one row group (a config the tuner may pick).
TEST(LaunchPlan, MergedBlocksWriteOnePartialRowPerCluster) {
  codegen::LaunchConfig c = codegen::choose_launch_config(problem(4096), 90, 132, 8);  // not the column pass
  c.merge = codegen::merge_for_few_rows(problem(4096), c, 90, 199);  // the tuner's merged twin
  ASSERT_EQ(c.merge, 8);
  EXPECT_EQ(c.blocks_per_group(), 8);
  EXPECT_EQ(runtime::max_row_groups(c, kH100, 199), 25) << "199 blocks of a row each, 8 to a cluster";
  EXPECT_EQ(runtime::max_row_groups(c, kH100, 8), 1);
  c.merge = 1;
  EXPECT_EQ(runtime::max_row_groups(c, kH100, 199), 199);
}

TEST(LaunchPlan, NoWorkspaceWhereOneRowGroupWritesTheGradients) {
  EXPECT_EQ(runtime::workspace_bound(problem(4096), kH100, 1), 0u);
  EXPECT_GT(runtime::workspace_bound(problem(4096), kH100, 2), 0u) << "the heuristic does not merge: a block per row";
  codegen::LaunchConfig merged = codegen::choose_launch_config(problem(4096), 90, 132, 8);
  merged.merge = 8;
  EXPECT_EQ(runtime::launch_workspace_bytes(problem(4096), merged, runtime::max_row_groups(merged, kH100, 8)), 0u)
      << "a tuned merge of 8 blocks holds all 8 rows";
  runtime::DeviceLimits a100 = kH100;
  a100.sm = 80;
  a100.sm_count = 108;
  EXPECT_GT(runtime::workspace_bound(problem(4096), a100, 2), 0u) << "no clusters before sm_90: a block per row";
  const codegen::LaunchConfig streamed = codegen::streamed_launch_config(problem(1 << 20));
  EXPECT_GT(runtime::launch_workspace_bytes(problem(1 << 20), streamed, 1), 0u) << "streamed rows use partials";
}

TEST(LaunchPlan, AGridClusterIsOneRowGroupWithItsRowSumsInTheWorkspace) {
  const codegen::LaunchConfig grid = codegen::choose_launch_config(problem(1 << 20), 90, 132);
  ASSERT_TRUE(grid.grid);
  EXPECT_EQ(runtime::max_row_groups(grid, kH100, 4096), 1);
  // A ring of 2·(defer + batch) + 2 slots (defer = stages − 2 rows, batches of defer + 1) of
  // [132] float2 sums and one arrival counter each, whatever M: no dγ/dβ partials.
  const size_t ring = 2 * ((grid.stages - 2) + (grid.stages - 1)) + 2;
  EXPECT_EQ(runtime::grid_ring_slots(grid), static_cast<int>(ring));
  const size_t bytes = (ring * 132 * 8 + ring * 4 + 15) / 16 * 16;
  EXPECT_EQ(runtime::launch_workspace_bytes(problem(1 << 20), grid, 1), bytes);
  EXPECT_EQ(runtime::grid_sums_bytes(grid), bytes);
  EXPECT_EQ(runtime::workspace_bound(problem(1 << 20), kH100, 64), bytes);
}

// An SM margin launches the other SMs' share of the row groups at a time (at least one, never
// more than there are); a grid cluster is always one launch.
TEST(LaunchPlan, AnSmMarginLaunchesTheOtherSmsShareOfTheRowGroups) {
  const NormProblem p = problem(4096);
  const auto c = codegen::choose_launch_config(p);
  EXPECT_EQ(runtime::groups_per_launch(c, kH100, 264, 0), 264);
  EXPECT_EQ(runtime::groups_per_launch(c, kH100, 264, 66), 132);
  EXPECT_EQ(runtime::groups_per_launch(c, kH100, 264, 131), 2);
  EXPECT_EQ(runtime::groups_per_launch(c, kH100, 264, 4096), 2);  // one SM's share
  EXPECT_EQ(runtime::groups_per_launch(c, kH100, 37, 131), 1);
  EXPECT_EQ(runtime::groups_per_launch(c, kH100, 1, 100), 1);
  for (int margin = 0; margin <= 200; ++margin)
    for (int64_t groups : {1, 2, 7, 132, 264, 1056}) {
      const int64_t launched = runtime::groups_per_launch(c, kH100, groups, margin);
      EXPECT_GE(launched, 1);
      EXPECT_LE(launched, groups);
    }
  codegen::LaunchConfig grid = c;
  grid.grid = true;
  grid.cluster = 132;
  EXPECT_EQ(runtime::groups_per_launch(grid, kH100, 1, 66), 1);
}

// The column pass counts a row group per row: its workspace is the rows' float2 sums (16-byte
// rounded), it writes dγ/dβ itself (no reduction), and an SM margin does not split it.
TEST(LaunchPlan, TheColumnPassKeepsARowsSumsInTheWorkspace) {
  const NormProblem p = problem(8192);
  const codegen::LaunchConfig c = codegen::choose_launch_config(p, 90, 132, 199);
  ASSERT_GT(c.column_pass, 0) << codegen::describe(c);
  EXPECT_EQ(runtime::row_groups(c, kH100, 199, 1), 199);
  EXPECT_EQ(runtime::launch_workspace_bytes(p, c, 199), 1600u);
  EXPECT_EQ(runtime::launch_workspace_bytes(p, c, 37), 304u);
  EXPECT_TRUE(runtime::writes_gradients_directly(c, 199));
  EXPECT_EQ(runtime::groups_per_launch(c, kH100, 199, 66), 199);
  EXPECT_EQ(runtime::column_blocks(p, c), 128) << "8 slots of 8 columns a block";
  EXPECT_GE(runtime::workspace_bound(p, kH100, 199), 1600u);
}
