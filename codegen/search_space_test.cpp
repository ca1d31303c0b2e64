#include "codegen/search_space.h"

#include <gtest/gtest.h>

#include <algorithm>

#include <set>

#include "codegen/norm_problem.h"

using namespace normjit;
using codegen::LaunchConfig;
using codegen::search_space;

namespace {

NormProblem problem(int64_t n, DType x, int alignment = 16, NormKind kind = NormKind::LayerNorm) {
  NormProblem p;
  p.kind = kind;
  p.n = n;
  p.x_dtype = x;
  p.weight_dtype = DType::F32;
  p.has_bias = kind == NormKind::LayerNorm;
  p.alignment = alignment;
  return codegen::resolve_problem(p);
}

// Problems across the families: short rows, one warp, one block, staged, clusters, streamed,
// odd N, low alignment, every dtype.
std::vector<NormProblem> sweep() {
  std::vector<NormProblem> out;
  for (DType x : {DType::F32, DType::F16, DType::BF16})
    for (int64_t n : {1, 64, 256, 1000, 1024, 4095, 4096, 5120, 8192, 16384, 65536, 262144, 1048576})
      for (int align : {16, 2}) {
        if (align < codegen::dtype_size(x)) continue;
        out.push_back(problem(n, x, align));
        out.push_back(problem(n, x, align, NormKind::RMSNorm));
      }
  return out;
}

}  // namespace

TEST(SearchSpace, StartsWithTheHeuristicsConfig) {
  for (int sm : {75, 80, 90})
    for (const NormProblem& p : sweep()) {
      const std::vector<LaunchConfig> space = search_space(p, sm);
      ASSERT_FALSE(space.empty()) << codegen::describe(p) << " sm_" << sm;
      EXPECT_EQ(space.front(), codegen::choose_launch_config(p, sm)) << codegen::describe(p) << " sm_" << sm;
    }
}

TEST(SearchSpace, EveryCandidateCanRunAndIsNotPruned) {
  for (int sm : {75, 80, 86, 90})
    for (const NormProblem& p : sweep())
      for (const LaunchConfig& c : search_space(p, sm)) {
        EXPECT_NO_THROW(codegen::check_launch_config(p, c)) << codegen::describe(c);
        EXPECT_EQ(codegen::prune_reason(p, c, sm), "") << codegen::describe(c) << " sm_" << sm;
      }
}

TEST(SearchSpace, HasNoDuplicatesAndIsDeterministic) {
  for (const NormProblem& p : sweep()) {
    const std::vector<LaunchConfig> a = search_space(p, 90), b = search_space(p, 90);
    EXPECT_EQ(a, b) << codegen::describe(p);
    std::set<std::string> seen;
    for (const LaunchConfig& c : a) EXPECT_TRUE(seen.insert(codegen::describe(c)).second) << codegen::describe(c);
  }
}

TEST(SearchSpace, IsSmallEnoughToTuneInASecondOrTwo) {
  for (const NormProblem& p : sweep()) EXPECT_LE(search_space(p, 90).size(), codegen::kMaxCandidates);
  // Typical shapes offer a real choice (several families or shapes), not just the heuristic.
  for (int64_t n : {1024, 4096, 8192, 16384})
    EXPECT_GE(search_space(problem(n, DType::BF16), 90).size(), 6u) << n;
}

TEST(SearchSpace, ClustersOnlyOnSm90AndStagesOnlyFromSm80) {
  for (const NormProblem& p : sweep()) {
    for (const LaunchConfig& c : search_space(p, 80))
      if (!c.grid) EXPECT_EQ(c.cluster, 1) << codegen::describe(c);
    for (const LaunchConfig& c : search_space(p, 75)) {
      EXPECT_EQ(c.cluster, 1) << codegen::describe(c);
      EXPECT_FALSE(c.staged) << codegen::describe(c);
    }
  }
  bool any_cluster = false;
  for (const LaunchConfig& c : search_space(problem(65536, DType::BF16), 90)) any_cluster |= c.cluster > 1;
  EXPECT_TRUE(any_cluster) << "N = 65536 on sm_90 should try clusters";
  int grids = 0;
  for (const LaunchConfig& c : search_space(problem(1048576, DType::BF16), 80, 108)) {
    if (!c.grid) continue;
    ++grids;
    EXPECT_EQ(c.cluster, 108) << codegen::describe(c);
  }
  EXPECT_GE(grids, 2) << "N = 1M tries grid clusters of several stage counts";
}

TEST(SearchSpace, ExploresTheAxesTheKernelsExpose) {
  const std::vector<LaunchConfig> space = search_space(problem(4096, DType::BF16), 90);
  std::set<int> threads, vecs;
  bool prefetch = false, staged = false, two_blocks = false;
  for (const LaunchConfig& c : space) {
    threads.insert(c.threads);
    vecs.insert(c.vec);
    prefetch |= c.prefetch;
    staged |= c.staged;
    two_blocks |= c.min_blocks_per_sm > 1;
  }
  EXPECT_GE(threads.size(), 3u);
  EXPECT_EQ(vecs, (std::set<int>{4, 8}));
  EXPECT_TRUE(prefetch && staged && two_blocks);
  // Short rows: several rows per block, at more than one block size.
  std::set<int> rows_per_block;
  for (const LaunchConfig& c : search_space(problem(256, DType::F32), 90)) rows_per_block.insert(c.rows_per_block());
  EXPECT_GE(rows_per_block.size(), 3u);
}

TEST(SearchSpace, PrunesWhatCannotBeResident) {
  const NormProblem p = problem(8192, DType::F32);
  LaunchConfig c;
  c.vec = 4;
  c.threads = c.threads_per_row = 1024;  // 2 elements a thread: fine
  EXPECT_EQ(codegen::prune_reason(p, c, 90), "");
  c.min_blocks_per_sm = 2;  // 2 x 1024 threads exceed any SM's registers at >= 32 a thread
  EXPECT_NE(codegen::prune_reason(p, c, 90).find("registers"), std::string::npos);

  LaunchConfig wide;  // 64 elements of fp32 x and dy a thread, with prefetch: beyond 255 registers
  wide.vec = 4;
  wide.threads = wide.threads_per_row = 128;
  wide.prefetch = true;
  EXPECT_NE(codegen::prune_reason(problem(8192, DType::F32), wide, 90).find("spill"), std::string::npos);

  LaunchConfig cluster;
  cluster.vec = 8;
  cluster.cluster = 4;
  cluster.threads = cluster.threads_per_row = 512;
  EXPECT_EQ(codegen::prune_reason(problem(65536, DType::BF16), cluster, 90), "");
  EXPECT_NE(codegen::prune_reason(problem(65536, DType::BF16), cluster, 80).find("sm_90"), std::string::npos);

  LaunchConfig staged;  // two blocks of ~128 KB stages do not fit one SM
  staged.vec = 4;
  staged.staged = true;
  staged.threads = staged.threads_per_row = 1024;
  staged.min_blocks_per_sm = 2;
  EXPECT_GT(codegen::dynamic_shared_bytes(problem(8192, DType::F32), staged), 120000u);
  EXPECT_NE(codegen::prune_reason(problem(8192, DType::F32), staged, 90).find("shared memory"), std::string::npos);
  EXPECT_NE(codegen::prune_reason(problem(8192, DType::F32), staged, 75).find("sm_80"), std::string::npos);
}

TEST(SearchSpace, RegisterEstimateGrowsWithWhatAThreadHolds) {
  const NormProblem p = problem(4096, DType::BF16);
  LaunchConfig small, big = small;
  small.vec = big.vec = 8;
  small.threads = small.threads_per_row = 512;  // 8 elements a thread
  big.threads = big.threads_per_row = 256;      // 16
  EXPECT_LT(codegen::estimated_registers(p, small), codegen::estimated_registers(p, big));
  LaunchConfig prefetching = small;
  prefetching.prefetch = true;
  EXPECT_LT(codegen::estimated_registers(p, small), codegen::estimated_registers(p, prefetching));
}

// At most 8 rows on sm_90: each config that can merge is tried merged too, right after itself.
// Beyond 8 rows no merged block is searched (they never came within 0.2% of the best there).
TEST(SearchSpace, FewRowsAlsoTryMergedBlocks) {
  NormProblem p;
  p.n = 4096;
  p.x_dtype = DType::BF16;
  p.has_bias = true;
  p = codegen::resolve_problem(p);
  auto merged = [](const std::vector<codegen::LaunchConfig>& list) {
    return std::count_if(list.begin(), list.end(), [](const codegen::LaunchConfig& c) { return c.merge > 1; });
  };
  const std::vector<codegen::LaunchConfig> few = codegen::search_space(p, 90, 132, 5);
  EXPECT_GE(merged(few), 3);
  EXPECT_EQ(few.front().merge, 1) << "the heuristic's config for 5 rows comes first, unmerged";
  EXPECT_EQ(few.at(1).merge, 8) << "then its merged twin (m's bucket, 8)";
  for (const codegen::LaunchConfig& c : few)
    if (c.merge > 1) EXPECT_TRUE(c.row_in_registers && !c.staged && c.cluster == 1) << codegen::describe(c);
  for (const int64_t m : {int64_t{9}, int64_t{199}, int64_t{65536}, int64_t{-1}})
    EXPECT_EQ(merged(codegen::search_space(p, 90, 132, m)), 0) << m << " rows";
  EXPECT_EQ(merged(codegen::search_space(p, 80, 108, 5)), 0);
}

namespace {

// Shared sums (LaunchConfig::shared_sums) are candidates wherever there are sums to keep (γ or
// β) on sm_80+, and every such candidate fits: its sums (and merge buffer) in a block, its
// blocks per SM in the SM's shared memory, its registers under the estimate's 64 a thread.
TEST(SearchSpace, SharedSumsCandidatesExistWhereThereAreSumsAndFit) {
  for (const NormProblem& p : sweep())
    for (int sm : {80, 90}) {
      int shared = 0;
      for (const LaunchConfig& c : search_space(p, sm, 132)) {
        if (!c.shared_sums) continue;
        ++shared;
        EXPECT_TRUE(p.has_weight || p.has_bias) << codegen::describe(p);
        EXPECT_EQ(c.rows_per_block(), 1) << codegen::describe(c);
        const size_t bytes = codegen::dynamic_shared_bytes(p, c);
        EXPECT_LE(bytes, codegen::max_stage_bytes(sm)) << codegen::describe(p) << ": " << codegen::describe(c);
        EXPECT_LE(c.min_blocks_per_sm * (bytes + codegen::static_merge_bytes(p, c) + codegen::kStaticSharedReserve),
                  codegen::max_shared_per_sm(sm))
            << codegen::describe(p) << ": " << codegen::describe(c);
      }
      // Rows of 4097 elements and more, aligned for 16-byte vectors: some shared-sums candidate
      // (on sm_80, without clusters, only rows one block holds).
      if (p.n > 4096 && p.alignment == 16 && p.n <= (sm >= 90 ? 262144 : 16384) && (p.has_weight || p.has_bias))
        EXPECT_GT(shared, 0) << codegen::describe(p) << " sm_" << sm;
    }
  NormProblem plain = problem(8192, DType::BF16);
  plain.has_weight = plain.has_bias = false;
  plain = codegen::resolve_problem(plain);
  for (const LaunchConfig& c : search_space(plain, 90, 132)) EXPECT_FALSE(c.shared_sums) << codegen::describe(c);
}

// A packed 16-bit row whose block of 16 elements a thread fills the SM (12288: 768 threads)
// is also tried with the next row prefetched, the SM's only way to a second row in flight.
TEST(SearchSpace, SharedSumsPrefetchTheNextRowWhereOneBlockFillsTheSm) {
  for (int64_t n : {12288, 14336, 16384}) {
    const NormProblem p = problem(n, DType::BF16);
    bool found = false;
    for (const LaunchConfig& c : search_space(p, 90, 132))
      found |= c.shared_sums && c.prefetch && c.vec == 8 && c.threads == n / 16 && c.min_blocks_per_sm == 1;
    EXPECT_TRUE(found) << codegen::describe(p);
  }
}

// 16-bit rows with fp32 γ/β also try shared sums at 4-wide vectors (γ's loads in whole
// sectors), in one block a row only; with 16-bit γ/β and for fp32 rows only the widest.
TEST(SearchSpace, SixteenBitRowsWithFp32WeightsTryFourWideSharedSumsInOneBlock) {
  auto four_wide = [](const NormProblem& p, bool clusters) {
    int found = 0;
    for (const LaunchConfig& c : search_space(p, 90, 132))
      found += c.shared_sums && c.vec == 4 && (c.cluster > 1) == clusters;
    return found;
  };
  EXPECT_GT(four_wide(problem(16384, DType::BF16), false), 0);
  EXPECT_GT(four_wide(problem(8192, DType::F16, 16, NormKind::RMSNorm), false), 0);
  EXPECT_EQ(four_wide(problem(65536, DType::BF16), true), 0);
  EXPECT_EQ(four_wide(problem(16384, DType::BF16), true), 0);
  NormProblem same = problem(16384, DType::BF16);
  same.weight_dtype = DType::BF16;
  same = codegen::resolve_problem(same);
  for (const LaunchConfig& c : search_space(same, 90, 132))
    EXPECT_FALSE(c.shared_sums && c.vec == 4) << codegen::describe(c);
}

// The compile-cost rank grows with the elements a thread unrolls, more with prefetch, and
// doubles for staged rows. Among LN bf16 8192's candidates (NVRTC 13.0, one thread) the
// 256-thread blocks with prefetch (32 elements a thread, 556 ms) compile longest, then the
// staged 512-thread blocks (488 ms) and the plain 256-thread ones (448 ms), against 230-420 ms
// for the rest: the rank puts them first, in that order.
TEST(SearchSpace, CompileCostRanksTheLongestCompilesFirst) {
  const NormProblem p = problem(8192, DType::BF16);
  LaunchConfig c;
  c.threads = c.threads_per_row = 512;
  c.vec = 8;
  LaunchConfig wider = c;
  wider.threads = wider.threads_per_row = 256;
  LaunchConfig staged = c;
  staged.staged = true;
  LaunchConfig prefetch = wider;
  prefetch.prefetch = true;
  EXPECT_LT(codegen::compile_cost(p, c), codegen::compile_cost(p, wider));
  EXPECT_EQ(codegen::compile_cost(p, staged), 2 * codegen::compile_cost(p, c));
  EXPECT_GT(codegen::compile_cost(p, prefetch), codegen::compile_cost(p, wider));
  std::vector<LaunchConfig> space = search_space(p, 90, 132, 8192);
  std::stable_sort(space.begin(), space.end(), [&](const LaunchConfig& a, const LaunchConfig& b) {
    return codegen::compile_cost(p, a) > codegen::compile_cost(p, b);
  });
  ASSERT_GE(space.size(), 3u);
  EXPECT_TRUE(space[0].prefetch && space[0].threads == 256 && !space[0].staged) << codegen::describe(space[0]);
  EXPECT_TRUE(space[1].staged || space[1].threads == 256) << codegen::describe(space[1]);
}

// Rows of 16-bit elements aligned to 2 bytes load one element at a time: at 32 elements a
// thread the search does not add prefetch to them (it did at 16).
TEST(SearchSpace, NoPrefetchWhereScalarLoadsBindTheKernel) {
  const NormProblem p = problem(5003, DType::BF16, 2);
  const LaunchConfig heuristic = codegen::choose_launch_config(p, 90, 132);
  bool prefetch_at_16 = false;
  for (const LaunchConfig& k : search_space(p, 90, 132)) {
    if (!k.prefetch || k.cluster > 1 || k == heuristic) continue;
    const int64_t elements = codegen::elements_per_thread(p, k);
    EXPECT_LT(elements, 32) << codegen::describe(k);
    prefetch_at_16 |= elements == 16;
  }
  EXPECT_TRUE(prefetch_at_16);
}

// Shared sums are searched at 8 and 16 elements a thread, not 32 (none of the 236 timed over
// the sweep came within 2%), whatever the dtype; the heuristic's own config is exempt.
TEST(SearchSpace, SharedSumsHoldAtMostSixteenElementsAThread) {
  for (const int64_t n : {2048, 8192, 14336, 16384, 65536})
    for (const DType d : {DType::BF16, DType::F32}) {
      const NormProblem p = problem(n, d);
      const LaunchConfig heuristic = codegen::choose_launch_config(p, 90, 132);
      for (const LaunchConfig& k : search_space(p, 90, 132)) {
        if (!k.shared_sums || k == heuristic) continue;
        const int64_t elements = codegen::elements_per_thread(p, k);
        EXPECT_LE(elements, 16) << "N=" << n << " " << codegen::describe(k);
      }
    }
}

// The search leaves staged rows at 4 slots a thread to the heuristic (they never won a shape of
// the sweep and compiled slowest): every other staged candidate has 1 or 2 slots a thread.
TEST(SearchSpace, StagedCandidatesHoldAtMostTwoSlotsAThread) {
  for (const int64_t n : {4096, 5003, 8192, 16384, 65536, 262144})
    for (const DType d : {DType::BF16, DType::F32}) {
      const NormProblem p = problem(n, d, n % 2 ? codegen::dtype_size(d) : 16);
      const LaunchConfig heuristic = codegen::choose_launch_config(p, 90, 132);
      for (const int64_t m : {int64_t{256}, int64_t{-1}}) {
        int staged = 0;
        for (const LaunchConfig& k : search_space(p, 90, 132, m)) {
          if (!k.staged || k.grid || k == heuristic) continue;
          ++staged;
          const int64_t slots = codegen::elements_per_thread(p, k) / k.vec;
          EXPECT_LE(slots, 2) << "N=" << n << " " << codegen::describe(k);
        }
        if (n >= 8192 && n <= 65536 && m == 256) EXPECT_GT(staged, 0) << "N=" << n << ": staged rows are still searched";
      }
    }
}

// The estimate leaves shared sums' accumulators out of registers: the same rows cost fewer.
TEST(SearchSpace, SharedSumsCostNoAccumulatorRegisters) {
  const NormProblem p = problem(8192, DType::BF16);
  LaunchConfig c;
  c.threads = c.threads_per_row = 512;
  c.vec = 8;
  LaunchConfig shared = c;
  shared.shared_sums = true;
  EXPECT_EQ(codegen::estimated_registers(p, c) - codegen::estimated_registers(p, shared), 2 * 16)
      << "16 elements a thread, dγ and dβ";
}

}  // namespace

// The search leaves out what the H100's exhaustive tuning of the sweep never found worth it
// (search_space.cpp): clusters with sums in registers at 1024 rows or more where sums can be
// shared, streamed rows on sm_90, grid clusters at 4 slots a thread or where a cluster of 16
// holds the row for 64 rows or more. Where sums cannot be shared, clusters stay.
TEST(SearchSpace, LeavesOutWhatExhaustiveTuningNeverPicked) {
  for (const NormProblem& p : sweep())
    for (const int64_t m : {int64_t{1024}, int64_t{65536}, int64_t{-1}}) {
      const std::vector<LaunchConfig> space = search_space(p, 90, 132, m);
      for (size_t i = 1; i < space.size(); ++i) {  // [0]: the heuristic's config, always kept
        const LaunchConfig& c = space[i];
        if (c == codegen::choose_launch_config(p, 90, 132)) continue;
        if (c.cluster > 1 && !c.grid) EXPECT_TRUE(c.shared_sums) << m << " rows: " << codegen::describe(c);
        EXPECT_TRUE(c.row_in_registers) << "no streamed rows on sm_90: " << codegen::describe(c);
        if (c.grid) EXPECT_LE(codegen::elements_per_thread(p, c) / c.vec, 2) << codegen::describe(c);
      }
    }
  for (const DType d : {DType::BF16, DType::F32}) {
    auto grids = [&](int64_t m) {
      const std::vector<LaunchConfig> space = search_space(problem(262144, d), 90, 132, m);
      return std::count_if(space.begin(), space.end(), [](const LaunchConfig& c) { return c.grid; });
    };
    EXPECT_EQ(grids(256), 0) << "a cluster of 16 holds a row of 262144";
    EXPECT_GT(grids(8), 0) << "few rows of 262144 may spread over every SM";
  }
  NormProblem plain = problem(65536, DType::BF16);
  plain.has_weight = plain.has_bias = false;
  plain = codegen::resolve_problem(plain);
  const std::vector<LaunchConfig> space = search_space(plain, 90, 132, 4096);
  EXPECT_GT(std::count_if(space.begin(), space.end(), [](const LaunchConfig& c) { return c.cluster > 1 && !c.grid; }), 1)
      << "no sums to share: clusters keep them (none) in registers";
}

// Past what a cluster of 16 holds at 16 elements a thread, its blocks at up to 24 elements are
// a candidate at any M (the heuristic's from 17 rows, the grid's below), where the rule would
// give them; beyond, none.
TEST(SearchSpace, RowsPastAClusterOf16TryItsWideBlocks) {
  auto wide_candidates = [](const NormProblem& p, int64_t m) {
    const std::vector<LaunchConfig> space = search_space(p, 90, 132, m);
    return std::count_if(space.begin(), space.end(), [&](const LaunchConfig& c) {
      return c.cluster == 16 && c.shared_sums && !c.grid && c.row_in_registers && codegen::elements_per_thread(p, c) > 16;
    });
  };
  for (const DType d : {DType::BF16, DType::F32})
    for (const int64_t m : {int64_t{8}, int64_t{256}}) {
      EXPECT_EQ(wide_candidates(problem(327680, d), m), 1) << codegen::dtype_name(d) << " M = " << m;
      EXPECT_EQ(wide_candidates(problem(524288, d), m), 0) << codegen::dtype_name(d) << " M = " << m;
    }
}

// Rows copied ahead into shared memory are tried for aligned option-free rows of 8192 or more
// on sm_80+, at 1 and 2 rows ahead; never where the kernel cannot take them.
TEST(SearchSpace, RowsCopiedAheadForLongAlignedRows) {
  auto copied_ahead = [](const NormProblem& p, int sm) {
    const std::vector<LaunchConfig> space = search_space(p, sm, 132, 4096);
    std::vector<LaunchConfig> out;
    for (const LaunchConfig& c : space)
      if (c.shared_prefetch > 0) {
        EXPECT_NO_THROW(codegen::check_launch_config(p, c)) << codegen::describe(c);
        out.push_back(c);
      }
    return out;
  };
  for (const int64_t n : {8192, 16384, 65536, 262144}) {
    const std::vector<LaunchConfig> ahead = copied_ahead(problem(n, DType::BF16), 90);
    EXPECT_FALSE(ahead.empty()) << n;
    EXPECT_TRUE(std::any_of(ahead.begin(), ahead.end(), [](const LaunchConfig& c) { return c.cluster > 1; })) << n;
  }
  const std::vector<LaunchConfig> at_16384 = copied_ahead(problem(16384, DType::BF16), 90);
  EXPECT_TRUE(
      std::any_of(at_16384.begin(), at_16384.end(), [](const LaunchConfig& c) { return c.shared_prefetch == 2; }));
  EXPECT_TRUE(copied_ahead(problem(4096, DType::BF16), 90).empty()) << "short rows";
  EXPECT_TRUE(copied_ahead(problem(16384, DType::BF16), 75).empty()) << "no cp.async before sm_80";
  NormProblem gated = problem(16384, DType::BF16);
  gated.kind = NormKind::RMSNorm;
  gated.has_bias = false;
  gated.gate = Gate::AfterNorm;
  EXPECT_TRUE(copied_ahead(codegen::resolve_problem(gated), 90).empty()) << "fused options";
  NormProblem unaligned = problem(16383, DType::BF16);
  unaligned.alignment = 2;
  EXPECT_TRUE(copied_ahead(codegen::resolve_problem(unaligned), 90).empty()) << "odd rows";
}

// Paired rows are tried for many rows on sm_90 (the shared-sums blocks and the heuristic's
// config, at their blocks an SM and at one), wherever the kernel takes them: not for few rows,
// before sm_90, or with fused options.
TEST(SearchSpace, PairedRowsForManyRowsOnSm90) {
  auto paired = [](const NormProblem& p, int sm, int64_t m) {
    std::vector<LaunchConfig> out;
    for (const LaunchConfig& c : search_space(p, sm, 132, m))
      if (c.paired_rows) {
        EXPECT_NO_THROW(codegen::check_launch_config(p, c)) << codegen::describe(c);
        EXPECT_FALSE(c.prefetch || c.shared_prefetch > 0) << codegen::describe(c);
        out.push_back(c);
      }
    return out;
  };
  for (const int64_t n : {2048, 8192, 16384, 65536}) {
    const std::vector<LaunchConfig> at_n = paired(problem(n, DType::BF16), 90, 4096);
    EXPECT_FALSE(at_n.empty()) << n;
    EXPECT_TRUE(std::any_of(at_n.begin(), at_n.end(), [](const LaunchConfig& c) { return c.min_blocks_per_sm == 1; }))
        << n << ": at one block an SM too";
    EXPECT_FALSE(paired(problem(n, DType::F32), 90, -1).empty()) << n << " fp32";
    EXPECT_TRUE(paired(problem(n, DType::BF16), 90, 256).empty()) << n << ": few rows";
    EXPECT_TRUE(paired(problem(n, DType::BF16), 80, 4096).empty()) << n << ": sm_80";
  }
  NormProblem residual = problem(16384, DType::BF16);
  residual.residual = true;
  EXPECT_TRUE(paired(codegen::resolve_problem(residual), 90, 4096).empty()) << "fused options";
}

// One row a block of 64 threads is left out at 1024 rows or more on sm_90 (none of 347 timed
// came within 0.5% of the best), unless it is the heuristic's.
TEST(SearchSpace, NoSixtyFourThreadRowBlocksForManyRowsOnSm90) {
  for (const NormProblem& p : sweep())
    for (const int64_t m : {int64_t{1024}, int64_t{-1}}) {
      const std::vector<LaunchConfig> space = search_space(p, 90, 132, m);
      for (size_t i = 0; i < space.size(); ++i) {
        const LaunchConfig& c = space[i];
        if (c == codegen::choose_launch_config(p, 90, 132, m) || c == codegen::choose_launch_config(p, 90, 132)) continue;
        EXPECT_FALSE(c.rows_per_block() == 1 && c.cluster == 1 && c.threads == 64) << codegen::describe(c);
      }
    }
  bool few_rows_have_them = false;
  for (const LaunchConfig& c : search_space(problem(2048, DType::F32), 90, 132, 64))
    few_rows_have_them |= c.rows_per_block() == 1 && c.cluster == 1 && c.threads == 64;
  EXPECT_TRUE(few_rows_have_them) << "64 rows of 2048 fp32 still try 64-thread blocks";
}

// `normjit emit --config` takes a candidate as `tune --list` prints it: every field comes back.
// Recomputing x̂ from y, the first kMaxFlippedCandidates configs come again after the others
// with early_weights flipped, where it runs (rows in registers as fp32); other problems never.
TEST(SearchSpace, RecomputeTriesItsFirstConfigsWithEarlyWeightsFlipped) {
  for (const NormProblem& plain : sweep()) {
    NormProblem p = plain;
    p.recompute_from_output = true;
    p = codegen::resolve_problem(p);
    const std::vector<LaunchConfig> with = search_space(p, 90, 132, 65536, 18.4);
    const std::vector<LaunchConfig> without = search_space(plain, 90, 132, 65536, 18.4);
    EXPECT_TRUE(std::none_of(without.begin(), without.end(), [](const LaunchConfig& c) { return c.early_weights; }))
        << codegen::describe(plain);
    auto flipped = [](LaunchConfig c) {
      c.early_weights = !c.early_weights;
      return c;
    };
    // The base list: the shortest prefix after which every config is the flip of one of its first
    // kMaxFlippedCandidates (the heuristic's own config may read its weights early already).
    size_t bases = 0;
    auto flip_of_base = [&](const LaunchConfig& c, size_t b) {
      const auto end = with.begin() + static_cast<std::ptrdiff_t>(std::min(b, codegen::kMaxFlippedCandidates));
      return std::find(with.begin(), end, flipped(c)) != end;
    };
    while (!std::all_of(with.begin() + static_cast<std::ptrdiff_t>(bases), with.end(),
                        [&](const LaunchConfig& c) { return flip_of_base(c, bases); }))
      ++bases;
    for (size_t i = 0; i < with.size(); ++i)
      EXPECT_EQ(std::count(with.begin(), with.end(), with[i]), 1) << codegen::describe(with[i]) << " twice";
    EXPECT_LE(bases, codegen::kMaxCandidates) << codegen::describe(p);
    EXPECT_LE(with.size(), bases + codegen::kMaxFlippedCandidates) << codegen::describe(p);
    size_t flips = 0;
    for (size_t i = 0; i < std::min(bases, codegen::kMaxFlippedCandidates); ++i) {
      const LaunchConfig f = flipped(with[i]);
      bool runs = true;
      try {
        codegen::check_launch_config(p, f);
      } catch (const std::invalid_argument&) {
        runs = false;
      }
      EXPECT_EQ(std::count(with.begin(), with.end(), f), runs ? 1 : 0) << codegen::describe(p) << ": " << codegen::describe(f);
      // A flip already among the bases (the heuristic's early config and the H100 rules' late one) is not added again.
      flips += runs && std::find(with.begin(), with.begin() + static_cast<std::ptrdiff_t>(bases), f) ==
                           with.begin() + static_cast<std::ptrdiff_t>(bases);
    }
    EXPECT_EQ(with.size(), bases + flips) << codegen::describe(p);
    if (p.n == 4095 && p.alignment == 2) EXPECT_GE(flips, 10u) << codegen::describe(p);
  }
}

TEST(SearchSpace, EveryCandidateParsesBackFromItsDescription) {
  for (int sm : {80, 90})
    for (const NormProblem& p : sweep())
      for (const LaunchConfig& c : search_space(p, sm))
        EXPECT_EQ(codegen::parse_described_config(codegen::describe(c)), c) << codegen::describe(c);
}

TEST(SearchSpace, RowsInPhaseAlsoTryTheirAlignedTwinsConfigsPhased) {
  for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm})
    for (int64_t n : {1001, 4095, 5003, 8191, 12289, 16383, 30001}) {
      const NormProblem p = problem(n, DType::BF16, 2, kind);
      const std::vector<LaunchConfig> space = search_space(p, 90, 132, 16384, 18.4);
      int64_t phased = 0;
      for (const LaunchConfig& c : space)
        if (c.phased) {
          ++phased;
          EXPECT_EQ(c.vec, 8) << codegen::describe(c);
          EXPECT_LE(c.cluster, codegen::kMaxPhasedCluster) << codegen::describe(c);
          EXPECT_TRUE(c.row_in_registers && !c.staged && c.rows_per_block() == 1) << codegen::describe(c);
        }
      EXPECT_GE(phased, 2) << codegen::describe(p);
      EXPECT_LE(phased, codegen::kMaxPhasedCandidates) << codegen::describe(p);
      // Rows out of phase, aligned rows and fp32 rows have none.
      NormProblem out_of_phase = p;
      out_of_phase.rows_in_phase = false;
      for (const NormProblem& q : {out_of_phase, problem(n + 1, DType::BF16, 16, kind), problem(n, DType::F32, 4, kind)})
        for (const LaunchConfig& c : search_space(q, 90, 132, 16384, 18.4))
          EXPECT_FALSE(c.phased) << codegen::describe(q) << " " << codegen::describe(c);
    }
}
