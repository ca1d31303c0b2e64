#include "codegen/launch_config.h"

#include <map>
#include <gtest/gtest.h>

#include <tuple>
#include <utility>

#include "codegen/forward_config.h"
#include "codegen/integer_math.h"
#include "codegen/kernel_source.h"
#include "codegen/norm_problem.h"
#include "codegen/phased_rows_config.h"
#include "codegen/search_space.h"

using namespace normjit;
using codegen::choose_launch_config;
using codegen::LaunchConfig;

namespace {
// Rows aligned to less than 16 bytes here are out of phase (strided rows, or views that start
// off a boundary): the rules of their own alignment. Rows in phase: codegen/phased_rows_config_test.cpp.
NormProblem problem(int64_t n, DType x, int alignment = 16) {
  NormProblem p;
  p.n = n;
  p.x_dtype = x;
  p.alignment = alignment;
  p.rows_in_phase = false;
  return codegen::resolve_problem(p);
}
// A LayerNorm (γ, β) or RMSNorm (γ) problem with fp32 weights and `option` applied: the fused
// rules' shapes.
NormProblem with_option(int64_t n, DType x, NormKind kind, void (*option)(NormProblem&)) {
  NormProblem p = problem(n, x);
  p.kind = kind;
  p.weight_dtype = DType::F32;
  p.has_bias = kind == NormKind::LayerNorm;
  option(p);
  return codegen::resolve_problem(p);
}
void no_option(NormProblem&) {}
// The config of many rows (M·N = 64 Mi) aligned to `alignment` bytes on an sm_90 of 132 SMs whose
// memory rate is `rate` bytes an SM cycle (0: the H100's rules).
LaunchConfig rows_at_rate(int64_t n, DType x, int alignment, double rate, NormKind kind = NormKind::LayerNorm,
                          void (*option)(NormProblem&) = no_option) {
  NormProblem p = with_option(n, x, kind, option);
  p.alignment = alignment;
  return choose_launch_config(codegen::resolve_problem(p), 90, 132, 67108864 / n, rate);
}
}  // namespace

TEST(LaunchConfig, SixteenByteVectorsWhenAligned) {
  EXPECT_EQ(choose_launch_config(problem(4096, DType::BF16), 80).vec, 8);
  EXPECT_EQ(choose_launch_config(problem(1024, DType::BF16), 80).vec, 8);
  EXPECT_EQ(choose_launch_config(problem(4096, DType::F16), 80).vec, 8);
  EXPECT_EQ(choose_launch_config(problem(4096, DType::F32)).vec, 4);
}

TEST(LaunchConfig, NarrowerVectorsWhenRowsAreLessAlignedAndNotStaged) {
  EXPECT_EQ(choose_launch_config(problem(4096, DType::BF16, 4), 75).vec, 2);
  EXPECT_EQ(choose_launch_config(problem(4096, DType::BF16, 2), 75).vec, 1);
  EXPECT_EQ(choose_launch_config(problem(4095, DType::F32, 4), 75).vec, 1);
  EXPECT_EQ(choose_launch_config(problem(300, DType::BF16, 2), 90).vec, 1);  // one warp per row
}

TEST(LaunchConfig, LessAlignedRowsAreStagedWithFullVectorsBeyond4096In16BitTypes) {
  for (int64_t n : {5003, 12289}) {
    const LaunchConfig c = choose_launch_config(problem(n, DType::BF16, 2), 90);
    EXPECT_TRUE(c.staged) << n;
    EXPECT_EQ(c.vec, 8) << n;
    EXPECT_FALSE(codegen::realigned_slots(problem(n, DType::BF16, 2), c)) << n;  // the stage takes the shift
  }
  // Measured faster in registers (bench/NOTES.md, entry 10).
  EXPECT_FALSE(choose_launch_config(problem(4095, DType::BF16, 2), 90).staged);
  EXPECT_FALSE(choose_launch_config(problem(5003, DType::F32, 4), 90).staged);
}

// 16-bit rows aligned to less than 4 bytes, an element a thread a pass, hold 16 elements a
// thread in either dtype (bench/NOTES.md entry 35).
TEST(LaunchConfig, ScalarSixteenBitRowsHoldSixteenElementsAThread) {
  for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm}) {
    for (DType x : {DType::BF16, DType::F16}) {
      auto threads = [&](int64_t n) {
        NormProblem p = problem(n, x, 2);
        p.kind = kind;
        p.has_bias = kind == NormKind::LayerNorm;
        p.weight_dtype = DType::F32;
        const LaunchConfig c = choose_launch_config(codegen::resolve_problem(p), 90, 132);
        EXPECT_EQ(c.vec, 1) << n;
        return c.threads;
      };
      EXPECT_EQ(threads(1001), 64);
      EXPECT_EQ(threads(2049), 160);
      EXPECT_EQ(threads(2561), 192);
      EXPECT_EQ(threads(3001), 192);
      EXPECT_EQ(threads(4095), 256);
    }
  }
}

// Long 16-bit rows aligned to less than 16 bytes take realigned 16-byte slots in registers
// (bench/NOTES.md entry 34): from 16385 in the backward, where a block or cluster holds the row,
// and from 32769 in the forward; shorter rows, streamed backward rows and fp32 keep the aligned
// width.
TEST(LaunchConfig, LongSixteenBitRowsAlignedToLessTakeRealignedSlots) {
  for (int64_t n : {16385, 32769, 131071, 262143})
    for (int alignment : {2, 4, 8}) {
      const NormProblem p = problem(n, DType::BF16, alignment);
      const LaunchConfig c = choose_launch_config(p, 90, 132);
      EXPECT_EQ(c.vec, 8) << n << " align " << alignment;
      EXPECT_TRUE(c.row_in_registers && !c.staged) << n << " " << codegen::describe(c);
      EXPECT_TRUE(codegen::realigned_slots(p, c)) << n;
      EXPECT_NO_THROW(codegen::check_launch_config(p, c));
    }
  for (int64_t n : {1001, 4095, 16383}) {
    const NormProblem p = problem(n, DType::BF16, 2);
    EXPECT_FALSE(codegen::realigned_slots(p, choose_launch_config(p, 90, 132))) << n;
  }
  // Beyond what a cluster holds: the grid's staged slices (realigned as they are copied in);
  // streamed rows keep an element a thread a pass.
  const NormProblem longest = problem(262145, DType::BF16, 2);
  const LaunchConfig grid = choose_launch_config(longest, 90, 132);
  EXPECT_TRUE(grid.grid && grid.staged) << codegen::describe(grid);
  EXPECT_EQ(grid.vec, 8);
  EXPECT_EQ(codegen::streamed_launch_config(longest).vec, 1);
  EXPECT_EQ(choose_launch_config(problem(32769, DType::F32, 4), 90, 132).vec, 1);

  // The forward: 32769 on, not 16385.
  EXPECT_EQ(codegen::choose_forward_config(codegen::resolve_forward_problem(problem(32769, DType::BF16, 2)), 90).vec, 8);
  EXPECT_EQ(codegen::choose_forward_config(codegen::resolve_forward_problem(problem(16385, DType::BF16, 2)), 90).vec, 1);
}

TEST(LaunchConfig, OnlyEightAndSixteenByteSlotsMayBeWiderThanTheRowsAlignment) {
  const NormProblem p = problem(5003, DType::BF16, 2);
  EXPECT_TRUE(codegen::rows_take_vector(p, 1));
  EXPECT_FALSE(codegen::rows_take_vector(p, 2));  // 4 bytes: not realigned
  EXPECT_TRUE(codegen::rows_take_vector(p, 4));
  EXPECT_TRUE(codegen::rows_take_vector(p, 8));
  EXPECT_TRUE(codegen::rows_take_vector(problem(5003, DType::F32, 4), 1));
  EXPECT_FALSE(codegen::rows_take_vector(problem(5003, DType::F32, 4), 2));  // fp32 is never realigned
  EXPECT_FALSE(codegen::rows_take_vector(problem(5003, DType::F32, 4), 4));
  LaunchConfig c = choose_launch_config(problem(4095, DType::BF16, 2), 90);
  ASSERT_EQ(c.vec, 1);
  c.vec = 2;
  EXPECT_THROW(codegen::check_launch_config(problem(4095, DType::BF16, 2), c), std::invalid_argument);
  c.vec = 8;
  EXPECT_NO_THROW(codegen::check_launch_config(problem(4095, DType::BF16, 2), c));
  EXPECT_TRUE(codegen::realigned_slots(problem(4095, DType::BF16, 2), c));
  c.staged = true;
  EXPECT_FALSE(codegen::realigned_slots(problem(4095, DType::BF16, 2), c));
  // The search space offers the aligned width first, then both realigned ones.
  EXPECT_EQ(codegen::candidate_vector_widths(problem(4095, DType::BF16, 2)), (std::vector<int>{1, 8, 4}));
  EXPECT_EQ(codegen::candidate_vector_widths(problem(32769, DType::BF16, 2)), (std::vector<int>{8, 4, 1}));
  EXPECT_EQ(codegen::candidate_vector_widths(problem(4096, DType::BF16)), (std::vector<int>{8, 4}));
  EXPECT_EQ(codegen::candidate_vector_widths(problem(4096, DType::F32)), (std::vector<int>{4, 2}));
}

TEST(LaunchConfig, FittedShapesOnHopper) {
  auto ln = [](int64_t n) {  // with β, as measured
    NormProblem p = problem(n, DType::BF16);
    p.has_bias = true;
    return codegen::resolve_problem(p);
  };
  auto rms = [](int64_t n) {
    NormProblem p = problem(n, DType::BF16);
    p.kind = NormKind::RMSNorm;
    p.has_bias = false;
    return codegen::resolve_problem(p);
  };
  // 16-bit rows of 4096 (RMSNorm 16384, 32 elements a thread): registers, 8-byte vectors.
  for (const NormProblem& p : {ln(4096), rms(16384)}) {
    const LaunchConfig c = choose_launch_config(p, 90);
    EXPECT_FALSE(c.staged || c.shared_sums) << codegen::describe(p);
    EXPECT_EQ(c.vec, 4) << codegen::describe(p);
  }
  // Beyond, up to 16384: shared sums, one block of 16 elements a thread in 16-byte vectors, as
  // many blocks per SM as 64 registers a thread allow (bench/NOTES.md, entry 21).
  for (auto [n, threads, min_blocks] : {std::tuple<int64_t, int, int>{5120, 320, 3}, {7168, 448, 2}, {8192, 512, 2},
                                        {12288, 768, 1}, {14336, 896, 1}, {16384, 1024, 1}}) {
    const LaunchConfig c = choose_launch_config(ln(n), 90);
    EXPECT_TRUE(c.shared_sums && !c.staged) << n;
    EXPECT_EQ(c.vec, 8) << n;
    EXPECT_EQ(c.cluster, 1) << n;
    EXPECT_EQ(c.threads, threads) << n;
    EXPECT_EQ(c.min_blocks_per_sm, min_blocks) << n;
  }
  // 16-bit rows of 512 to 2048: 8-byte vectors, a warp per row up to 1024, then 128 threads;
  // but rows that leave a warp's last pass part-empty are staged, a slot a thread.
  for (const NormProblem& p : {ln(1000), rms(1000), ln(2000)}) {
    const LaunchConfig c = choose_launch_config(p, 90);
    EXPECT_TRUE(c.staged) << codegen::describe(p);
    EXPECT_EQ(c.threads, (p.n / 8 + 31) / 32 * 32) << codegen::describe(p);
  }
  for (auto [n, lanes, threads] : {std::tuple<int64_t, int, int>{512, 32, 128}, {896, 32, 128}, {1024, 32, 128},
                                   {2048, 128, 128}}) {
    for (const NormProblem& p : {ln(n), rms(n)}) {
      const LaunchConfig c = choose_launch_config(p, 90);
      EXPECT_EQ(c.vec, 4) << codegen::describe(p);
      EXPECT_EQ(c.threads_per_row, lanes) << codegen::describe(p);
      EXPECT_EQ(c.threads, threads) << codegen::describe(p);
      EXPECT_FALSE(c.prefetch) << codegen::describe(p);
    }
  }
  // Longer 16-bit rows: shared-sums clusters. Where their blocks fill the SM, 8 elements a
  // thread in clusters of 8, prefetching (blocks of at most 512 threads, or 1024), or 16 in
  // clusters of 16 blocks of 512; elsewhere 16 elements a thread, blocks of 512 threads (two
  // per SM) up to 8 of them, then of 1024.
  for (auto [n, cluster, threads, prefetch] :
       {std::tuple<int64_t, int, int, bool>{20480, 8, 320, true}, {32768, 8, 512, true}, {49152, 8, 384, false},
        {65536, 8, 1024, true}, {98304, 8, 768, false}, {131072, 16, 512, false}, {262144, 16, 1024, false}}) {
    for (const NormProblem& p : {ln(n), rms(n)}) {
      const LaunchConfig c = choose_launch_config(p, 90);
      if (p.kind == NormKind::RMSNorm && n > 65536) {
        // One sum: blocks of 16 elements a thread, one an SM, copying the next row ahead.
        EXPECT_EQ(codegen::describe(c), "threads=" + std::to_string(n / (16 * (n > 131072 ? 16 : 8))) +
                                            " threads_per_row=" + std::to_string(n / (16 * (n > 131072 ? 16 : 8))) +
                                            " vec=8 registers cluster=" + (n > 131072 ? "16" : "8") +
                                            " shared_prefetch=1 shared_sums shared_weights");
        continue;
      }
      EXPECT_TRUE(c.shared_sums && !c.staged) << codegen::describe(p);
      EXPECT_EQ(c.cluster, cluster) << codegen::describe(p);
      EXPECT_EQ(c.threads, threads) << codegen::describe(p);
      EXPECT_EQ(c.prefetch, prefetch) << codegen::describe(p);
      EXPECT_EQ(c.min_blocks_per_sm, std::max(1, 1024 / threads)) << codegen::describe(p);
      EXPECT_LE(codegen::dynamic_shared_bytes(p, c), codegen::max_stage_bytes(90)) << codegen::describe(p);
    }
  }
  // Without γ and β there is nothing to sum: staged clusters of 1024-thread blocks, 2 slots each.
  NormProblem plain = problem(32768, DType::BF16);
  plain.has_weight = false;
  plain = codegen::resolve_problem(plain);
  const LaunchConfig staged = choose_launch_config(plain, 90);
  EXPECT_TRUE(staged.staged && !staged.shared_sums);
  EXPECT_EQ(staged.cluster, 2);
  EXPECT_EQ(staged.threads, 1024);
  // fp32 with many rows where a cluster of eight 1024-thread blocks would hold the row, or
  // more: clusters of 16 blocks of at most 512 threads with shared sums, two an SM; 8
  // elements a thread up to 65536, 16 beyond. Beyond 131072, 1024-thread blocks of 16.
  for (auto [n, threads] : {std::pair<int64_t, int>{61440, 480}, {65536, 512}, {98304, 384}, {131072, 512}}) {
    const LaunchConfig c = choose_launch_config(problem(n, DType::F32), 90);
    EXPECT_TRUE(c.shared_sums && !c.staged) << n;
    EXPECT_EQ(c.cluster, 16) << n;
    EXPECT_EQ(c.threads, threads) << n;
    EXPECT_EQ(c.min_blocks_per_sm, 2) << n;
  }
  const LaunchConfig fp32_long = choose_launch_config(problem(262144, DType::F32), 90);
  EXPECT_TRUE(fp32_long.shared_sums);
  EXPECT_EQ(fp32_long.cluster, 16);
  EXPECT_EQ(fp32_long.threads, 1024);
  // With few rows (M = 2-8), the register cluster of eight 1024-thread blocks stays (at one
  // row the grid: grid_for_few_rows).
  const LaunchConfig fp32_few = choose_launch_config(problem(65536, DType::F32), 90, 132, 2);
  EXPECT_FALSE(fp32_few.staged || fp32_few.shared_sums);
  EXPECT_EQ(fp32_few.cluster, 8);
  EXPECT_TRUE(choose_launch_config(problem(65536, DType::F32), 90, 132, 1).grid);
  // sm_80 has no clusters: beyond one block's stage the row is streamed.
  EXPECT_EQ(choose_launch_config(problem(65536, DType::BF16), 80).cluster, 1);
}

TEST(LaunchConfig, StagesAreSizedForTheShiftOfLessAlignedRows) {
  LaunchConfig c = choose_launch_config(problem(5000, DType::BF16, 16), 80);
  const size_t aligned = codegen::dynamic_shared_bytes(problem(5000, DType::BF16, 16), c);
  const size_t stages = static_cast<size_t>(c.stages);
  EXPECT_EQ(aligned, stages * 2u * 5000u * 2u);  // x and dy, 2 bytes each
  EXPECT_EQ(codegen::dynamic_shared_bytes(problem(5000, DType::BF16, 2), c), aligned + stages * 2 * 16);
}

TEST(LaunchConfig, ShortRowsShareABlock) {
  const LaunchConfig c = choose_launch_config(problem(33, DType::BF16));
  EXPECT_GT(c.rows_per_block(), 1);
  EXPECT_TRUE(c.row_in_registers);
}

TEST(LaunchConfig, MediumRowsAreHeldInRegistersOneRowPerBlock) {
  const LaunchConfig c = choose_launch_config(problem(8192, DType::BF16));
  EXPECT_EQ(c.rows_per_block(), 1);
  EXPECT_TRUE(c.row_in_registers);
}

TEST(LaunchConfig, RowsTooLongForAClusterAreSharedByTheWholeGrid) {
  for (DType x : {DType::F32, DType::BF16}) {
    const LaunchConfig c = choose_launch_config(problem(1048576, x), 90, 132);
    EXPECT_TRUE(c.grid);
    EXPECT_TRUE(c.staged);
    EXPECT_EQ(c.cluster, 132) << "one block per SM";
    EXPECT_GE(c.stages, 3) << "at least one row's dx waits for the others' sums";
    EXPECT_LE(codegen::dynamic_shared_bytes(problem(1048576, x), c), codegen::max_stage_bytes(90));
    EXPECT_NO_THROW(codegen::check_launch_config(problem(1048576, x), c));
  }
  // An A100 (108 SMs) gets a grid of its own size; an unknown device the default.
  EXPECT_EQ(choose_launch_config(problem(1048576, DType::BF16), 80, 108).cluster, 108);
  EXPECT_EQ(choose_launch_config(problem(1048576, DType::BF16), 90).cluster, codegen::kDefaultGridCluster);
  // A slot a thread up to 512 threads (1024 in fp32), then more slots (1M / 132 blocks: 993
  // slots of bf16, 1986 of fp32).
  EXPECT_EQ(choose_launch_config(problem(1048576, DType::BF16), 90, 132).threads, 512);
  EXPECT_EQ(choose_launch_config(problem(1048576, DType::F32), 90, 132).threads, 1024);
  // Where a cluster still holds the row, or a block's slice is under 512 slots, no grid.
  EXPECT_FALSE(choose_launch_config(problem(262144, DType::BF16), 90, 132).grid);
  EXPECT_EQ(choose_launch_config(problem(262144, DType::BF16), 90, 132).cluster, 16);
  EXPECT_FALSE(choose_launch_config(problem(131072, DType::F32), 90, 132).grid);
  // fp32 262144: 16 elements a thread in a cluster of 16 with shared sums, not the grid.
  const LaunchConfig fp32_262144 = choose_launch_config(problem(262144, DType::F32), 90, 132);
  EXPECT_FALSE(fp32_262144.grid);
  EXPECT_EQ(fp32_262144.cluster, 16);
  EXPECT_TRUE(fp32_262144.shared_sums);
  EXPECT_TRUE(choose_launch_config(problem(524288, DType::F32), 90, 132).grid) << "993 slots a block";
  EXPECT_FALSE(choose_launch_config(problem(65536, DType::BF16), 80, 108).grid);
}

// Past what a cluster of 16 holds at 16 elements a thread (262144 columns): many rows take its
// blocks at up to 24 elements a thread (LayerNorm's fp32 rows 20), the fewest threads that hold
// them, with shared sums (and fp32 γ in shared memory where it fits); from 16 rows down, beyond,
// less aligned or with fused options the grid. Never streamed on sm_90: the rows of
// 262145-270335, 249-255 slots a block of 132, streamed before at any M.
TEST(LaunchConfig, RowsPastAClusterOf16TakeItsWideBlocksAtManyRowsAndTheGridAtFew) {
  for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm})
    for (DType x : {DType::BF16, DType::F16, DType::F32})
      for (int64_t n : {262145, 262152, 266240, 270335, 327680, 393216, 458752}) {
        const NormProblem p = with_option(n, x, kind, no_option);
        const int vec = 16 / codegen::dtype_size(x);
        const int64_t elements = vec * codegen::ceil_div(codegen::ceil_div(n, vec), int64_t{16 * 1024});
        const bool lnfp32 = kind == NormKind::LayerNorm && x == DType::F32;
        const bool wide = elements <= (lnfp32 ? 20 : 24);  // rows aligned to 16 bytes, whatever N
        for (double rate : {0.0, 18.4})
          for (int64_t m : {int64_t{1}, int64_t{16}, int64_t{17}, int64_t{256}, int64_t{4096}, int64_t{-1}}) {
            const LaunchConfig c = choose_launch_config(p, 90, 132, m, rate);
            const std::string what = codegen::describe(p) + " M = " + std::to_string(m) + ": " + codegen::describe(c);
            EXPECT_TRUE(c.row_in_registers) << what;
            if (wide && (m < 0 || m > 16)) {
              EXPECT_TRUE(c.cluster == 16 && c.shared_sums && !c.grid && !c.staged) << what;
              // The fewest threads that hold the block's slots at as many a thread.
              const int64_t slots = codegen::ceil_div(codegen::ceil_div(n, vec), int64_t{16});
              EXPECT_LT(c.threads - codegen::ceil_div(slots, elements / vec), 32) << what;
              EXPECT_EQ(c.vec, vec) << what;
            } else {
              EXPECT_TRUE(c.grid) << what;
            }
            EXPECT_NO_THROW(codegen::check_launch_config(p, c)) << what;
          }
      }
  // LayerNorm's rows aligned to less than 16 bytes, and fused options, take the grid at any M;
  // RMSNorm's 16-bit rows aligned to less the wide cluster in realigned slots from 33 rows.
  for (int64_t n : {262145, 262152, 327681}) {
    for (int alignment : {2, 4, 8}) {
      EXPECT_TRUE(choose_launch_config(problem(n, DType::BF16, alignment), 90, 132, 4096).grid) << n << " " << alignment;
      NormProblem rms = with_option(n, DType::F16, NormKind::RMSNorm, no_option);
      rms.alignment = alignment;
      rms = codegen::resolve_problem(rms);
      const LaunchConfig many = choose_launch_config(rms, 90, 132, 4096);
      EXPECT_TRUE(many.cluster == 16 && many.vec == 8 && many.shared_sums && codegen::realigned_slots(rms, many))
          << codegen::describe(rms) << ": " << codegen::describe(many);
      EXPECT_TRUE(choose_launch_config(rms, 90, 132, 32).grid) << codegen::describe(rms);
      EXPECT_FALSE(choose_launch_config(rms, 90, 132, 33).grid) << codegen::describe(rms);
    }
    const NormProblem residual = with_option(n, DType::BF16, NormKind::LayerNorm, [](NormProblem& q) { q.residual = true; });
    EXPECT_TRUE(choose_launch_config(residual, 90, 132, 4096).grid) << codegen::describe(residual);
  }
  // No clusters before sm_90.
  EXPECT_EQ(codegen::wide_cluster_config(problem(327680, DType::BF16), 80), std::nullopt);
  EXPECT_EQ(codegen::wide_cluster_config(problem(262144, DType::BF16), 90), std::nullopt) << "16 a thread hold it";
}

// The grid's stages of 24 KB and more (16-bit rows of 1M, fp32 of 512K) take a sixth on
// memory-rich devices where γ still fits beside it, four rows waiting for the other blocks'
// sums; smaller stages, rows without γ, and the H100's rules keep five (or fewer where they fit).
TEST(LaunchConfig, LongGridRowsOfLargeStagesKeepFourRowsWaiting) {
  auto grid_stages = [](NormKind kind, DType x, int64_t n, double rate, bool weight = true) {
    NormProblem p = with_option(n, x, kind, no_option);
    p.has_weight = weight;
    p = codegen::resolve_problem(p);
    const LaunchConfig c = choose_launch_config(p, 90, 132, 64, rate);
    EXPECT_TRUE(c.grid) << codegen::describe(p) << ": " << codegen::describe(c);
    EXPECT_NO_THROW(codegen::check_launch_config(p, c)) << codegen::describe(c);
    EXPECT_EQ(c.shared_weights, weight) << codegen::describe(p) << ": " << codegen::describe(c);
    return c.stages;
  };
  for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm})
    for (DType x : {DType::BF16, DType::F16}) {
      EXPECT_EQ(grid_stages(kind, x, 1048576, 18.4), 6);
      EXPECT_EQ(grid_stages(kind, x, 1048576, 0.0), 5) << "the H100's rules";
      EXPECT_EQ(grid_stages(kind, x, 524288, 18.4), 5) << "16 KB stages";
    }
  EXPECT_EQ(grid_stages(NormKind::LayerNorm, DType::F32, 524288, 18.4), 6);
  EXPECT_EQ(grid_stages(NormKind::LayerNorm, DType::F32, 1048576, 18.4), 3) << "64 KB stages: three fit";
  EXPECT_EQ(grid_stages(NormKind::RMSNorm, DType::BF16, 1048576, 18.4, /*weight=*/false), 5) << "no γ to hold";
}

// Nothing past what a cluster of 16 holds is streamed on sm_90, whatever the alignment, fused
// options, γ/β or M (the grid from the cluster's edge); up to session 57 16-bit rows of
// 262145-270335 were streamed at 6-22x the grid's time.
TEST(LaunchConfig, NoRowPastAClusterOf16IsStreamedOnSm90) {
  void (*options[])(NormProblem&) = {
      no_option, [](NormProblem& q) { q.residual = true; }, [](NormProblem& q) { q.recompute_from_output = true; },
      [](NormProblem& q) { q.parallel = true; }, [](NormProblem& q) { q.has_weight = q.has_bias = false; }};
  for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm})
    for (DType x : {DType::BF16, DType::F32})
      for (auto option : options)
        for (int64_t n : {262145, 262152, 266241, 270335, 393217, 1048577})
          for (int alignment : {2, 4, 16}) {
            if (x == DType::F32 && alignment < 4) continue;
            NormProblem p = with_option(n, x, kind, option);
            p.alignment = alignment;
            p = codegen::resolve_problem(p);
            for (int64_t m : {int64_t{1}, int64_t{64}, int64_t{4096}})
              for (double rate : {0.0, 18.4}) {
                const LaunchConfig c = choose_launch_config(p, 90, 132, m, rate);
                EXPECT_TRUE(c.row_in_registers) << codegen::describe(p) << " M = " << m << ": " << codegen::describe(c);
              }
          }
}

// Few rows of long rows, aligned and option-free, on sm_90: the grid, where many rows' config
// would leave SMs idle or wait on its meeting: one row from 32768 columns (fp32 LayerNorm from
// 65536, RMSNorm from 131072); clusters of 8 1024-thread blocks with shared sums up to 4 rows,
// of 16 up to 8 (up to 16 past 16 elements a thread: above); LayerNorm's 16-bit column pass at
// 65536 up to 4 rows.
TEST(LaunchConfig, FewLongRowsSpreadOverTheGrid) {
  struct Case {
    NormKind kind;
    DType x;
    int64_t n;
    int64_t most_rows;  // the grid up to this many rows, not beyond
  };
  for (const Case& k : {Case{NormKind::LayerNorm, DType::BF16, 32768, 1}, Case{NormKind::RMSNorm, DType::BF16, 32768, 1},
                        Case{NormKind::LayerNorm, DType::BF16, 65536, 4}, Case{NormKind::RMSNorm, DType::BF16, 65536, 1},
                        Case{NormKind::LayerNorm, DType::BF16, 131072, 4}, Case{NormKind::RMSNorm, DType::BF16, 131072, 4},
                        Case{NormKind::LayerNorm, DType::F16, 262144, 8}, Case{NormKind::RMSNorm, DType::BF16, 262144, 8},
                        Case{NormKind::LayerNorm, DType::F32, 32768, 0}, Case{NormKind::LayerNorm, DType::F32, 65536, 1},
                        Case{NormKind::RMSNorm, DType::F32, 65536, 0}, Case{NormKind::RMSNorm, DType::F32, 131072, 4},
                        Case{NormKind::LayerNorm, DType::F32, 262144, 8}})
    for (double rate : {0.0, 18.4}) {
      const NormProblem p = with_option(k.n, k.x, k.kind, no_option);
      for (int64_t m = 1; m <= std::max<int64_t>(2 * k.most_rows, 2); ++m) {
        const LaunchConfig c = choose_launch_config(p, 90, 132, m, rate);
        EXPECT_EQ(c.grid, m <= k.most_rows) << codegen::describe(p) << " M = " << m << ": " << codegen::describe(c);
        EXPECT_NO_THROW(codegen::check_launch_config(p, c));
      }
    }
  // Not below 32768 columns, with fused options, rows aligned to less, or before sm_90.
  EXPECT_FALSE(choose_launch_config(with_option(16384, DType::BF16, NormKind::LayerNorm, no_option), 90, 132, 1).grid);
  const NormProblem gated = with_option(262144, DType::BF16, NormKind::RMSNorm, [](NormProblem& q) { q.gate = Gate::AfterNorm; });
  EXPECT_FALSE(choose_launch_config(gated, 90, 132, 1).grid) << codegen::describe(gated);
  EXPECT_FALSE(choose_launch_config(problem(262136, DType::BF16, 8), 90, 132, 1).grid);
  EXPECT_FALSE(choose_launch_config(problem(131072, DType::BF16), 80, 108, 1).grid);
}

// Parallel norms' packed rows keep g for the dx pass (kHoldsSecondDy): on a memory-rich
// sm_90, many aligned 16-bit rows take a slot of 8 elements a thread (parallel_norms_config).
TEST(LaunchConfig, ParallelNormsOnMemoryRichDevicesTakeTheirTunedBlocks) {
  auto parallel = [](NormProblem& q) { q.parallel = true; };
  auto parallel_and_residual = [](NormProblem& q) { q.parallel = q.residual = true; };
  struct Case {
    NormKind kind;
    DType x;
    int64_t n;
    int threads, cluster, min_blocks;
    bool prefetch;
    int elements;  // a thread's: one slot of 8, or two
  };
  for (const Case& k : {Case{NormKind::RMSNorm, DType::BF16, 4096, 512, 1, 2, false, 8},
                        Case{NormKind::RMSNorm, DType::F16, 5120, 640, 1, 1, true, 8},
                        Case{NormKind::RMSNorm, DType::BF16, 8192, 1024, 1, 1, false, 8},
                        Case{NormKind::RMSNorm, DType::BF16, 14336, 224, 4, 3, false, 16},
                        Case{NormKind::RMSNorm, DType::BF16, 16384, 256, 4, 3, false, 16},
                        Case{NormKind::RMSNorm, DType::BF16, 20480, 320, 4, 2, false, 16},
                        Case{NormKind::RMSNorm, DType::F16, 28672, 448, 4, 2, false, 16},
                        Case{NormKind::RMSNorm, DType::BF16, 32768, 512, 4, 2, false, 16},
                        Case{NormKind::LayerNorm, DType::BF16, 8192, 1024, 1, 1, false, 8},
                        Case{NormKind::LayerNorm, DType::BF16, 13832, 224, 4, 3, false, 16},
                        Case{NormKind::LayerNorm, DType::BF16, 16384, 256, 4, 3, false, 16},
                        Case{NormKind::LayerNorm, DType::F16, 16384, 512, 4, 2, false, 8},
                        Case{NormKind::LayerNorm, DType::BF16, 18432, 288, 4, 2, false, 16},
                        Case{NormKind::LayerNorm, DType::F16, 24576, 384, 4, 2, false, 16},
                        Case{NormKind::LayerNorm, DType::BF16, 32768, 512, 8, 2, false, 8}}) {
    const NormProblem p = with_option(k.n, k.x, k.kind, parallel);
    const LaunchConfig c = rows_at_rate(k.n, k.x, 16, 18.4, k.kind, parallel);
    const std::string what = std::to_string(k.n) + ": " + codegen::describe(c);
    EXPECT_EQ(codegen::elements_per_thread(p, c), k.elements) << what;
    EXPECT_EQ(c.threads, k.threads) << what;
    EXPECT_EQ(c.cluster, k.cluster) << what;
    EXPECT_EQ(c.min_blocks_per_sm, k.min_blocks) << what;
    EXPECT_EQ(c.prefetch, k.prefetch) << what;
    EXPECT_TRUE(c.shared_sums) << what;
    // Not on the H100's rules, nor with another option beside.
    EXPECT_NE(codegen::describe(rows_at_rate(k.n, k.x, 16, 0, k.kind, parallel)), codegen::describe(c)) << what;
    EXPECT_NE(codegen::describe(rows_at_rate(k.n, k.x, 16, 18.4, k.kind, parallel_and_residual)), codegen::describe(c))
        << what;
  }
  // LayerNorm past 24576 and RMSNorm past 28672 keep the rows' one block an SM (two would spill).
  for (const auto& [kind, n, threads] : {std::tuple{NormKind::LayerNorm, 28672, 896}, {NormKind::RMSNorm, 30720, 960}}) {
    const LaunchConfig wide = rows_at_rate(n, DType::F16, 16, 18.4, kind, parallel);
    EXPECT_EQ(wide.threads, threads) << codegen::describe(wide);
    EXPECT_EQ(wide.min_blocks_per_sm, 1) << codegen::describe(wide);
  }
  // bf16 RMSNorm rows with 16-bit γ keep two slots a thread in one block.
  NormProblem narrow = with_option(8192, DType::BF16, NormKind::RMSNorm, parallel);
  narrow.weight_dtype = DType::BF16;
  const LaunchConfig kept = choose_launch_config(codegen::resolve_problem(narrow), 90, 132, 8192, 18.4);
  EXPECT_EQ(kept.threads, 512) << codegen::describe(kept);
  EXPECT_EQ(kept.min_blocks_per_sm, 2) << codegen::describe(kept);
  // fp16 RMSNorm at 16384 keeps its cluster of two 1024-thread blocks, and so does bf16 with
  // 16-bit γ; below 13825 columns bf16 keeps the rows' cluster of two.
  EXPECT_EQ(rows_at_rate(16384, DType::F16, 16, 18.4, NormKind::RMSNorm, parallel).threads, 1024);
  NormProblem narrow_16384 = with_option(16384, DType::BF16, NormKind::RMSNorm, parallel);
  narrow_16384.weight_dtype = DType::BF16;
  EXPECT_EQ(choose_launch_config(codegen::resolve_problem(narrow_16384), 90, 132, 4096, 18.4).threads, 1024);
  EXPECT_EQ(rows_at_rate(13824, DType::BF16, 16, 18.4, NormKind::LayerNorm, parallel).threads, 864);
}

TEST(LaunchConfig, LongRowsAreStreamedWhereNothingElseHoldsThem) {
  // sm_75 stages nothing; 4M fp32 columns over 132 blocks need more than 4 slots of 1024 threads.
  for (const auto& [n, sm] : {std::pair<int64_t, int>{1048576, 75}, {4194304, 90}}) {
    const LaunchConfig c = choose_launch_config(problem(n, DType::F32), sm, 132);
    EXPECT_FALSE(c.row_in_registers) << n;
    EXPECT_EQ(c.rows_per_block(), 1) << n;
  }
  const LaunchConfig streamed = codegen::streamed_launch_config(problem(1048576, DType::BF16));
  EXPECT_FALSE(streamed.row_in_registers);
  EXPECT_NO_THROW(codegen::check_launch_config(problem(1048576, DType::BF16), streamed));
}

TEST(LaunchConfig, GridClustersAreStagedAndSized) {
  const NormProblem p = problem(1048576, DType::BF16);
  LaunchConfig c = choose_launch_config(p, 90, 132);
  EXPECT_NE(codegen::describe(c).find(" grid"), std::string::npos) << codegen::describe(c);
  c.cluster = 2048;
  EXPECT_THROW(codegen::check_launch_config(p, c), std::invalid_argument);
  c = choose_launch_config(p, 90, 132);
  c.staged = false;
  EXPECT_THROW(codegen::check_launch_config(p, c), std::invalid_argument);
  c = choose_launch_config(p, 90, 132);
  c.grid = false;  // 132 is no thread-block cluster
  EXPECT_THROW(codegen::check_launch_config(p, c), std::invalid_argument);
  EXPECT_FALSE(choose_launch_config(p, 90, 132) == c);
}

TEST(LaunchConfig, EveryHeuristicChoicePassesItsOwnCheck) {
  for (int sm : {75, 80, 86, 90})
    for (DType x : {DType::F32, DType::F16, DType::BF16})
      for (int alignment : {1, 2, 4, 8, 16})
        for (int64_t n = 1; n <= 2000000; n = n < 64 ? n + 1 : n * 3 / 2 + 1) {
          if (alignment < codegen::dtype_size(x) / 2) continue;
          const NormProblem p = problem(n, x, alignment);
          LaunchConfig c;
          EXPECT_NO_THROW(c = choose_launch_config(p, sm)) << codegen::describe(p) << " sm_" << sm;
          EXPECT_LE(codegen::dynamic_shared_bytes(p, c), codegen::max_stage_bytes(sm)) << codegen::describe(p);
          if (sm < 90 && !c.grid) EXPECT_EQ(c.cluster, 1) << codegen::describe(p);
          if (sm < 80) EXPECT_FALSE(c.grid) << codegen::describe(p);
        }
}

TEST(LaunchConfig, CheckRejectsImpossibleShapes) {
  const NormProblem p = problem(4096, DType::BF16);
  LaunchConfig c = choose_launch_config(p);
  c.threads = 48;
  EXPECT_THROW(codegen::check_launch_config(p, c), std::invalid_argument);
  c = choose_launch_config(p);
  c.threads_per_row = 3;
  EXPECT_THROW(codegen::check_launch_config(p, c), std::invalid_argument);
  c = choose_launch_config(p);
  c.vec = 16;  // 32 bytes of bf16
  EXPECT_THROW(codegen::check_launch_config(p, c), std::invalid_argument);
  c = codegen::streamed_launch_config(problem(1048576, DType::BF16));
  c.row_in_registers = true;
  EXPECT_THROW(codegen::check_launch_config(problem(1048576, DType::BF16), c), std::invalid_argument);
}

// Few rows (M's power-of-two bucket at most 2 a multiprocessor): fp32 rows that many rows would
// stage or prefetch sit in registers as 8-byte vectors, 32 elements a thread; everything else,
// and any m beyond, keeps the many-rows config.
TEST(LaunchConfig, FewRowsOfFp32TakeRegistersInsteadOfStages) {
  EXPECT_TRUE(codegen::few_rows(0, 132));
  EXPECT_TRUE(codegen::few_rows(1, 132));
  EXPECT_TRUE(codegen::few_rows(256, 132));
  EXPECT_FALSE(codegen::few_rows(257, 132));  // its bucket, 512, is beyond 264
  EXPECT_FALSE(codegen::few_rows(-1, 132));
  EXPECT_TRUE(codegen::few_rows(256, 0));  // an unknown device counts as 132 SMs
  EXPECT_FALSE(codegen::few_rows(int64_t{1} << 40, 132));
  for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm})
    for (int64_t n : {4096, 8192}) {
      NormProblem p = problem(n, DType::F32);
      p.kind = kind;
      p.has_bias = kind == NormKind::LayerNorm;
      p = codegen::resolve_problem(p);
      const LaunchConfig many = choose_launch_config(p, 90, 132);
      // Many rows: 4096 prefetches, 8192 sits in registers (Fp32RowsOf4097To8192SitInRegistersForManyRows).
      EXPECT_TRUE(n == 4096 ? many.prefetch : !many.staged && many.row_in_registers) << codegen::describe(p);
      EXPECT_EQ(choose_launch_config(p, 90, 132, 1 << 20), many) << codegen::describe(p);
      // (37 rows of 8192 take the column pass: FewLong16BitRowsTakeTheColumnPass.)
      for (int64_t m : {37, 199}) {
        if (n == 8192 && m == 37) continue;
        const LaunchConfig few = choose_launch_config(p, 90, 132, m);
        EXPECT_FALSE(few.staged) << codegen::describe(p);
        EXPECT_TRUE(few.row_in_registers && few.prefetch) << codegen::describe(few);
        EXPECT_EQ(few.vec, 4) << codegen::describe(p);
        EXPECT_EQ(few.threads, n / 16) << "16 elements a thread: " << codegen::describe(p);
      }
      // A single row: nothing to prefetch; 32 elements a thread in 2-wide vectors.
      const LaunchConfig one = choose_launch_config(p, 90, 132, 1);
      EXPECT_TRUE(one.row_in_registers && !one.prefetch && !one.staged) << codegen::describe(one);
      EXPECT_EQ(one.vec, 2) << codegen::describe(p);
      EXPECT_EQ(one.threads, n / 32) << codegen::describe(p);
    }
  // 16-bit rows of 1024 take a block each instead of a warp, 16 elements a thread.
  const NormProblem bf16_1024 = codegen::resolve_problem(problem(1024, DType::BF16));
  ASSERT_EQ(choose_launch_config(bf16_1024, 90, 132).threads_per_row, 32);
  const LaunchConfig block_row = choose_launch_config(bf16_1024, 90, 132, 37);
  EXPECT_EQ(block_row.rows_per_block(), 1);
  EXPECT_EQ(block_row.threads, 64);
  EXPECT_EQ(block_row.vec, 4);
  // Other 16-bit rows keep their config, less the shared sums that many rows get (latency).
  const NormProblem bf16 = codegen::resolve_problem(problem(5120, DType::BF16));
  ASSERT_TRUE(choose_launch_config(bf16, 90, 132).shared_sums);
  EXPECT_FALSE(choose_launch_config(bf16, 90, 132, 1).shared_sums);
  const NormProblem bf16_4096 = codegen::resolve_problem(problem(4096, DType::BF16));
  EXPECT_EQ(choose_launch_config(bf16_4096, 90, 132, 1), choose_launch_config(bf16_4096, 90, 132));
}

// 16-byte aligned fp32 rows in a register cluster of 1024-thread blocks (16384-32768) take twice
// the blocks, of 512 threads, at 1-8 rows; at 9-16 rows, with fused options, less aligned and
// where the cluster would pass 8 blocks they keep the register cluster (which many rows of
// 16385-32768 trade for shared sums: below).
TEST(LaunchConfig, OneToFourFp32RowsInAClusterTakeHalfBlocks) {
  for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm})
    for (int64_t n : {16384, 32768, 65536}) {
      const NormProblem p = with_option(n, DType::F32, kind, no_option);
      const LaunchConfig many = choose_launch_config(p, 90, 132, 9);
      ASSERT_TRUE(many.cluster > 1 && many.threads == 1024 && many.row_in_registers && !many.staged &&
                  !many.shared_sums)
          << codegen::describe(many);
      for (int64_t m : {1, 3, 4, 8}) {
        const LaunchConfig few = choose_launch_config(p, 90, 132, m);
        if (m == 1 && n >= 65536 && kind == NormKind::LayerNorm) {  // one row: the grid (grid_for_few_rows)
          EXPECT_TRUE(few.grid) << codegen::describe(p) << ": " << codegen::describe(few);
          continue;
        }
        if (many.cluster * 2 > 8) {
          EXPECT_EQ(few.threads, many.threads) << codegen::describe(p);
          continue;
        }
        EXPECT_EQ(few.threads, 512) << codegen::describe(p) << " M = " << m;
        EXPECT_EQ(few.threads_per_row, 512);
        EXPECT_EQ(few.cluster, 2 * many.cluster);
        EXPECT_EQ(few.vec, many.vec);
        EXPECT_TRUE(few.row_in_registers && !few.staged && !few.prefetch && !few.shared_sums) << codegen::describe(few);
      }
      EXPECT_EQ(choose_launch_config(p, 90, 132, 9).threads, 1024) << codegen::describe(p);
      const NormProblem fused = with_option(n, DType::F32, kind, [](NormProblem& q) { q.residual = true; });
      EXPECT_EQ(choose_launch_config(fused, 90, 132, 1).threads, choose_launch_config(fused, 90, 132).threads)
          << codegen::describe(fused);
      const NormProblem unaligned = with_option(n, DType::F32, kind, [](NormProblem& q) { q.alignment = 4; });
      EXPECT_EQ(choose_launch_config(unaligned, 90, 132, 1), choose_launch_config(unaligned, 90, 132))
          << codegen::describe(unaligned);
    }
}

// Lanes a short row takes: 32, or 16 where that leaves no slot idle in the last pass and 32
// would, within max_passes.
TEST(LaunchConfig, RowLanesHalveWhereAWarpsLastPassWouldBeHalfEmpty) {
  EXPECT_EQ(codegen::row_lanes(80, 8), 16);   // N = 320 in 8-byte slots
  EXPECT_EQ(codegen::row_lanes(112, 8), 16);  // 448
  EXPECT_EQ(codegen::row_lanes(160, 8), 32);  // 640: 32 x 5
  EXPECT_EQ(codegen::row_lanes(144, 8), 32);  // 576: 16 would take 9 passes
  EXPECT_EQ(codegen::row_lanes(40, 4), 32);   // 320 in 16-byte slots: 16 leave idle slots too
  EXPECT_EQ(codegen::row_lanes(96, 8), 32);
  for (int64_t n : {320, 448}) {
    const LaunchConfig c = choose_launch_config(with_option(n, DType::BF16, NormKind::LayerNorm, no_option), 90, 132);
    EXPECT_EQ(c.threads_per_row, 16) << n << ": " << codegen::describe(c);
    EXPECT_EQ(c.vec, 4);
    EXPECT_EQ(choose_launch_config(with_option(n, DType::BF16, NormKind::LayerNorm, no_option), 90, 132, 1).threads_per_row,
              32)
        << "few rows keep a warp a row";
  }
}

// Many aligned 16-bit rows of 1025-2047 that 8-byte vectors would hold (N % 128 == 0): RMSNorm's
// in registers at 8 elements a thread, N/8 threads (to a warp), two blocks an SM; LayerNorm's with shared
// sums at 8 elements a thread, as many blocks an SM as make 1024 threads; 2048 and rows staged
// (N % 128 != 0) keep their rules.
TEST(LaunchConfig, ManySixteenBitRowsOf1025To2047TakeABlockOfEightElementsAThread) {
  for (DType x : {DType::BF16, DType::F16})
    for (int64_t n : {1152, 1280, 1536, 1792, 1920}) {
      const LaunchConfig rms = choose_launch_config(with_option(n, x, NormKind::RMSNorm, no_option), 90, 132);
      EXPECT_TRUE(!rms.shared_sums && rms.rows_per_block() == 1 && rms.vec == 8 && rms.threads == (n / 8 + 31) / 32 * 32 &&
                  rms.min_blocks_per_sm == 2)
          << n << ": " << codegen::describe(rms);
      const LaunchConfig ln = choose_launch_config(with_option(n, x, NormKind::LayerNorm, no_option), 90, 132);
      EXPECT_TRUE(ln.shared_sums && ln.rows_per_block() == 1 && ln.vec == 8 && ln.threads == (n / 8 + 31) / 32 * 32 &&
                  ln.min_blocks_per_sm == 1024 / ln.threads)
          << n << ": " << codegen::describe(ln);
      EXPECT_FALSE(choose_launch_config(with_option(n, x, NormKind::LayerNorm, no_option), 90, 132, 64).shared_sums);
      // Fused problems take the same configs but for the gate and parallel norms (below).
      for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm})
        for (auto option : {+[](NormProblem& q) { q.residual = true; },
                            +[](NormProblem& q) { q.residual = q.zero_centered_weight = q.rowscale = true; },
                            +[](NormProblem& q) { q.recompute_from_output = true; }}) {
          EXPECT_EQ(choose_launch_config(with_option(n, x, kind, option), 90, 132),
                    choose_launch_config(with_option(n, x, kind, no_option), 90, 132))
              << n << ": " << codegen::describe(with_option(n, x, kind, option));
        }
    }
  EXPECT_TRUE(choose_launch_config(with_option(1600, DType::BF16, NormKind::LayerNorm, no_option), 90, 132).staged);
  EXPECT_EQ(choose_launch_config(with_option(2048, DType::BF16, NormKind::LayerNorm, no_option), 90, 132).vec, 4);
}

namespace {
// The gate, in either order, as with_option's option; with γ in x's dtype for the second pair.
void gate_after_norm(NormProblem& q) { q.gate = Gate::AfterNorm; }
void gate_before_norm(NormProblem& q) { q.gate = Gate::BeforeNorm; }
void gate_after_norm_same_weights(NormProblem& q) {
  q.gate = Gate::AfterNorm;
  q.weight_dtype = q.x_dtype;
}
void gate_before_norm_same_weights(NormProblem& q) {
  q.gate = Gate::BeforeNorm;
  q.weight_dtype = q.x_dtype;
}
// The four of them, with what each sets.
struct GateOption {
  void (*apply)(NormProblem&);
  bool after_norm, fp32_weights;
  const char* name;
};
const GateOption kGateOptions[] = {{gate_after_norm, true, true, "after, fp32 γ"},
                                   {gate_after_norm_same_weights, true, false, "after, x's γ"},
                                   {gate_before_norm, false, true, "before, fp32 γ"},
                                   {gate_before_norm_same_weights, false, false, "before, x's γ"}};
}  // namespace

// The gate's rows of 32769-131072 columns, many rows (gate_long_rows, bench/NOTES.md entry 64):
// which of them leave the rule before (clusters of 8 of two slots a thread) for two slots in a
// cluster of 4 or one slot in the smallest cluster of 1024-thread blocks, by dtype and order, on
// both devices' rules; a single row keeps its own.
TEST(LaunchConfig, GateLongRowsTakeTheirTunedClusters) {
  enum Shape { kKeep, kTwoSlots, kOneSlot, kOneSlotPrefetching };
  struct Expected {
    int64_t n;
    Shape after[4], before[4];  // bf16 with fp32 γ, bf16 with bf16 γ, fp16 with fp32 γ, fp16 with fp16 γ
  };
  const Expected table[] = {
      {33000, {kTwoSlots, kTwoSlots, kKeep, kKeep}, {kTwoSlots, kTwoSlots, kTwoSlots, kOneSlotPrefetching}},
      {36864, {kTwoSlots, kTwoSlots, kTwoSlots, kOneSlotPrefetching}, {kTwoSlots, kTwoSlots, kTwoSlots, kOneSlotPrefetching}},
      {40960, {kTwoSlots, kTwoSlots, kTwoSlots, kOneSlotPrefetching}, {kTwoSlots, kTwoSlots, kTwoSlots, kOneSlotPrefetching}},
      {45056, {kKeep, kKeep, kKeep, kOneSlotPrefetching}, {kKeep, kKeep, kOneSlot, kOneSlot}},
      {53248, {kOneSlot, kOneSlot, kKeep, kKeep}, {kOneSlot, kOneSlot, kOneSlot, kOneSlot}},
      {61440, {kOneSlot, kOneSlot, kOneSlot, kOneSlot}, {kOneSlot, kOneSlot, kOneSlot, kOneSlot}},
      {81920, {kKeep, kKeep, kKeep, kKeep}, {kKeep, kKeep, kKeep, kOneSlotPrefetching}},
      {98304, {kKeep, kKeep, kKeep, kKeep}, {kKeep, kKeep, kOneSlot, kOneSlot}},
      {106496, {kKeep, kKeep, kKeep, kKeep}, {kOneSlot, kOneSlot, kOneSlot, kOneSlot}},
      {122880, {kOneSlot, kOneSlot, kOneSlot, kOneSlot}, {kOneSlot, kOneSlot, kOneSlot, kOneSlot}},
  };
  for (double rate : {0.0, 18.4})
    for (const Expected& e : table)
      for (const GateOption& g : kGateOptions)
        for (DType x : {DType::BF16, DType::F16}) {
          const int column = (x == DType::F16 ? 2 : 0) + (g.fp32_weights ? 0 : 1);
          const Shape shape = (g.after_norm ? e.after : e.before)[column];
          const LaunchConfig c = rows_at_rate(e.n, x, 16, rate, NormKind::RMSNorm, g.apply);
          const std::string name = std::string(x == DType::F16 ? "fp16 " : "bf16 ") + g.name;
          const std::string what = std::to_string(e.n) + " " + name + " at " + std::to_string(rate) + ": " +
                                   codegen::describe(c);
          const int64_t slots = e.n / 8;
          const int cluster = shape == kTwoSlots ? 4 : e.n > 65536 && shape != kKeep ? 16 : 8;
          const int per_thread = shape == kTwoSlots || shape == kKeep ? 2 : 1;
          const int64_t threads = (slots / cluster / per_thread + 31) / 32 * 32;  // whole warps
          EXPECT_EQ(c.vec, 8) << what;
          EXPECT_TRUE(c.shared_sums) << what;
          if (shape == kKeep) {
            EXPECT_TRUE(c.cluster == 8 && c.threads == threads) << what;  // two slots a thread
          } else {
            EXPECT_TRUE(c.cluster == cluster && c.threads == threads && c.min_blocks_per_sm == 1 &&
                        c.prefetch == (shape == kOneSlotPrefetching))
                << what;
          }
          if (shape != kKeep) {
            const LaunchConfig one_row =
                choose_launch_config(with_option(e.n, x, NormKind::RMSNorm, g.apply), 90, 132, 1, rate);
            EXPECT_NE(codegen::describe(one_row), codegen::describe(c)) << e.n << " " << name << " at M = 1";
          }
        }
}

// Every config the rules give a gated problem passes check_launch_config (which
// choose_launch_config runs) and fits the SM's shared memory: both orders, three dtypes with fp32
// and x's γ, aligned and 2-byte-aligned rows, few and many rows, both devices' rules, N from 1
// to 2M and every multiple of 8 (and its neighbour) where the gate has rules of its own.
TEST(LaunchConfig, EveryGatedChoicePassesItsOwnCheck) {
  std::vector<int64_t> ns;
  for (int64_t n = 1; n <= 2000000; n = n < 64 ? n + 1 : n * 3 / 2 + 1) ns.push_back(n);
  for (int64_t n = 10240; n <= 12296; n += 8) ns.push_back(n);
  for (int64_t n = 32760; n <= 131080; n += 1016) ns.insert(ns.end(), {n, n + 1});
  for (const GateOption& g : kGateOptions)
    for (DType x : {DType::F32, DType::F16, DType::BF16})
      for (int alignment : {2, 16})
        for (double rate : {0.0, 18.4})
          for (int64_t m : {int64_t{1}, int64_t{4096}})
            for (int64_t n : ns) {
              NormProblem p = with_option(n, x, NormKind::RMSNorm, g.apply);
              p.alignment = std::max(alignment, codegen::dtype_size(x));
              p = codegen::resolve_problem(p);
              LaunchConfig c;
              ASSERT_NO_THROW(c = choose_launch_config(p, 90, 132, m, rate)) << codegen::describe(p) << " m " << m;
              ASSERT_LE(codegen::dynamic_shared_bytes(p, c), codegen::max_stage_bytes(90)) << codegen::describe(p);
            }
}

// The gate after the norm at 10241-12288, many rows (session 50): a pair of blocks, one slot a
// thread prefetching with 16-bit γ, two slots a thread two blocks an SM with fp16 rows and fp32
// γ, and since session 51 one block of 8-byte vectors, four a thread, with bf16 rows and fp32 γ;
// the block of 16 elements a thread at 10240 and before the norm's pairs unchanged.
TEST(LaunchConfig, GateAfterTheNormPairsFrom10241) {
  for (double rate : {0.0, 18.4})
    for (DType x : {DType::BF16, DType::F16})
      for (int64_t n : {10248, 11264, 12288}) {
        const int64_t per_block = ((n + 7) / 8 + 1) / 2;  // slots of 8 in each of the pair
        const LaunchConfig same = rows_at_rate(n, x, 16, rate, NormKind::RMSNorm, gate_after_norm_same_weights);
        const std::string what = std::to_string(n) + " at " + std::to_string(rate) + ": ";
        EXPECT_TRUE(same.cluster == 2 && same.threads == (per_block + 31) / 32 * 32 && same.prefetch && same.shared_sums)
            << what << codegen::describe(same);
        const LaunchConfig fp32 = rows_at_rate(n, x, 16, rate, NormKind::RMSNorm, gate_after_norm);
        if (x == DType::BF16)
          EXPECT_TRUE(fp32.cluster == 1 && fp32.vec == 4 && fp32.threads == ((n + 15) / 16 + 31) / 32 * 32 && !fp32.prefetch &&
                      fp32.shared_sums)
              << what << codegen::describe(fp32);
        else
          EXPECT_TRUE(fp32.cluster == 2 && fp32.threads == ((per_block + 1) / 2 + 31) / 32 * 32 &&
                      fp32.min_blocks_per_sm == 2 && !fp32.prefetch && fp32.shared_sums)
              << what << codegen::describe(fp32);
        const LaunchConfig before = rows_at_rate(n, x, 16, rate, NormKind::RMSNorm, gate_before_norm);
        EXPECT_TRUE(before.cluster == 2 && before.threads == (per_block + 31) / 32 * 32 && !before.prefetch)
            << what << "before the norm: " << codegen::describe(before);
      }
  const LaunchConfig block = rows_at_rate(10240, DType::F16, 16, 18.4, NormKind::RMSNorm, gate_after_norm);
  EXPECT_TRUE(block.cluster == 1 && block.threads == 640) << codegen::describe(block);
}

// The gate after the norm in a cluster of two 1024-thread blocks (15873-16384), bf16 rows with
// fp32 γ: γ in shared memory (bench/NOTES.md entry 63). Not fp16 rows, 16-bit γ, the gate before
// the norm or 992 threads.
TEST(LaunchConfig, GateAfterTheNormHoldsFp32GammaInItsPairOfWideBlocks) {
  for (DType x : {DType::BF16, DType::F16})
    for (int64_t n : {15880, 16000, 16384})
      for (const GateOption& g : kGateOptions) {
        const LaunchConfig c = rows_at_rate(n, x, 16, 18.4, NormKind::RMSNorm, g.apply);
        const std::string what = std::to_string(n) + ": " + codegen::describe(c);
        const bool pair = c.cluster == 2 && c.threads == 1024 && c.shared_sums;
        if (g.after_norm) EXPECT_TRUE(pair) << what;
        EXPECT_EQ(c.shared_weights, pair && g.after_norm && x == DType::BF16 && g.fp32_weights) << what;
      }
  const LaunchConfig c = rows_at_rate(15872, DType::BF16, 16, 18.4, NormKind::RMSNorm, gate_after_norm);
  EXPECT_FALSE(c.shared_weights) << "15872: " << codegen::describe(c);
}

// The gate and parallel norms on many aligned 16-bit rows that a block of N/8 threads holds in
// whole warps (1025-2047 where N % 128 == 0, 2049-3072 where N % 256 == 0): shared sums at 8
// elements a thread, as many blocks an SM as make 1024 threads, parallel norms prefetching but
// fp16 LayerNorms; RMSNorm's parallel norms at 3072 keep RMSNorm's registers. Fitted to
// exhaustive tuning at 1280-3072 (bench/results/2026-11-25-h100-17a4667-fused-tune/). The gate
// since σ(z) is approximate (-2026-11-29-h200-{dfa438f-widen,34d0d11-gate-rules}/): these
// blocks at 2048 too, before the norm its sums in registers at 1025-2560 but 2048, two blocks an
// SM; after the norm prefetching above 2560.
TEST(LaunchConfig, GateAndParallelNormsOnBlocksOfEighthsShareSums) {
  for (DType x : {DType::BF16, DType::F16})
    for (int64_t n : {1152, 1280, 1536, 1920, 2048, 2304, 2560, 3072}) {
      const int threads = static_cast<int>((n / 8 + 31) / 32 * 32);
      for (Gate order : {Gate::AfterNorm, Gate::BeforeNorm}) {
        const NormProblem p = with_option(n, x, NormKind::RMSNorm, no_option);
        NormProblem gated = p;
        gated.gate = order;
        const LaunchConfig c = choose_launch_config(codegen::resolve_problem(gated), 90, 132);
        const std::string what = std::to_string(n) + ": " + codegen::describe(c);
        if (order == Gate::BeforeNorm && n <= 2560 && n != 2048) {
          EXPECT_EQ(c, choose_launch_config(p, 90, 132)) << what << ": RMSNorm's rule";
          EXPECT_TRUE(!c.shared_sums && !c.prefetch && c.vec == 8 && c.threads == threads && c.min_blocks_per_sm == 2)
              << what;
        } else {
          EXPECT_TRUE(c.shared_sums && c.vec == 8 && c.threads == threads && c.min_blocks_per_sm == 1024 / threads)
              << what;
          EXPECT_EQ(c.prefetch, order == Gate::AfterNorm && n > 2560) << what;
        }
      }
      if (n == 2048) continue;  // the gate's only
      for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm}) {
        const LaunchConfig c =
            choose_launch_config(with_option(n, x, kind, [](NormProblem& q) { q.parallel = true; }), 90, 132);
        const std::string what = std::to_string(n) + ": " + codegen::describe(c);
        if (kind == NormKind::RMSNorm && n > 2560) {  // RMSNorm's registers (its best at 3072)
          EXPECT_EQ(c, choose_launch_config(with_option(n, x, kind, no_option), 90, 132)) << what;
          continue;
        }
        EXPECT_TRUE(c.shared_sums && c.vec == 8 && c.threads == threads && c.min_blocks_per_sm == 1024 / threads) << what;
        EXPECT_EQ(c.prefetch, !(kind == NormKind::LayerNorm && x == DType::F16)) << what;
      }
    }
  // Not where N/8 leaves a warp part-empty (2432), nor at 3584 (fused_short_rows).
  NormProblem gated = with_option(2432, DType::BF16, NormKind::RMSNorm, [](NormProblem& q) { q.gate = Gate::AfterNorm; });
  EXPECT_TRUE(choose_launch_config(codegen::resolve_problem(gated), 90, 132).staged);
  gated.n = 3584;
  EXPECT_EQ(choose_launch_config(codegen::resolve_problem(gated), 90, 132).threads, 448);
}

// Fused problems on many aligned 16-bit rows of 4097-16384, fitted to exhaustive tuning
// (bench/results/2026-11-25-h100-7713342-fused-tune2/): RMSNorm's 16384 with options but the
// recompute in one block of 16 elements a thread with shared sums (not the half vectors); the
// parallel norms at 12289-16384 and the gate before the norm at 8193-16384, after it at
// 10241-16384 (since σ(z) is approximate, one block of 16 spills there:
// bench/results/2026-11-29-h200-{539569c-sigmoid-2,afca9b6-final}/) in a pair of blocks of 8;
// LayerNorm's recompute in the option-free row's config (since its dx pass holds x̂: the pair
// of blocks it took before is gone, bench/results/2026-11-25-h100-1b07551-recompute-held/);
// the gate after the norm prefetching in one block of fewer than 1024 threads.
TEST(LaunchConfig, FusedOptionsOnRowsOf4097To16384) {
  const auto residual = [](NormProblem& q) { q.residual = true; };
  const auto parallel = [](NormProblem& q) { q.parallel = true; };
  const auto recompute = [](NormProblem& q) { q.recompute_from_output = true; };
  for (DType x : {DType::BF16, DType::F16}) {
    EXPECT_EQ(codegen::describe(choose_launch_config(with_option(16384, x, NormKind::RMSNorm, residual), 90, 132)),
              "threads=1024 threads_per_row=1024 vec=8 registers shared_sums shared_weights");
    EXPECT_EQ(choose_launch_config(with_option(16384, x, NormKind::RMSNorm, recompute), 90, 132).vec, 4)
        << "the recompute keeps the half vectors";
    for (int64_t n : {10240, 12288, 12800, 14336, 16384}) {
      NormProblem gated = with_option(n, x, NormKind::RMSNorm, no_option);
      gated.gate = Gate::BeforeNorm;
      const LaunchConfig g = choose_launch_config(codegen::resolve_problem(gated), 90, 132);
      EXPECT_TRUE(g.cluster == 2 && g.shared_sums && g.threads == n / 16 && !g.prefetch) << n << ": " << codegen::describe(g);
      // After the norm the pair from 10241 (session 50; fp32 γ: two slots a thread to 12288, in
      // bf16 one block of 8-byte vectors there since session 51): below it one block of 16 wins.
      gated.gate = Gate::AfterNorm;
      const LaunchConfig a = choose_launch_config(codegen::resolve_problem(gated), 90, 132);
      const bool quarter_vectors = x == DType::BF16 && n > 10240 && n <= 12288;
      EXPECT_EQ(a.cluster, n > 10240 && !quarter_vectors ? 2 : 1) << n << ": " << codegen::describe(a);
      EXPECT_EQ(a.vec, quarter_vectors ? 4 : 8) << n << ": " << codegen::describe(a);
      EXPECT_TRUE(a.shared_sums && !a.prefetch) << n << ": " << codegen::describe(a);
    }
    for (int64_t n : {12800, 14336, 16384}) {
      for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm}) {
        const LaunchConfig c = choose_launch_config(with_option(n, x, kind, parallel), 90, 132);
        EXPECT_TRUE(c.cluster == 2 && c.shared_sums && c.threads == n / 16 && c.vec == 8) << n << ": " << codegen::describe(c);
      }
    }
    EXPECT_EQ(choose_launch_config(with_option(12288, x, NormKind::LayerNorm, parallel), 90, 132).cluster, 1);
    for (int64_t n : {5120, 7168, 8192, 10240, 12288, 14336, 16384}) {
      const LaunchConfig c = choose_launch_config(with_option(n, x, NormKind::LayerNorm, recompute), 90, 132);
      const LaunchConfig plain = choose_launch_config(with_option(n, x, NormKind::LayerNorm, no_option), 90, 132);
      EXPECT_EQ(c.cluster, 1) << n << ": " << codegen::describe(c);
      EXPECT_TRUE(c.shared_sums && c.threads == plain.threads && c.min_blocks_per_sm == plain.min_blocks_per_sm)
          << n << ": " << codegen::describe(c) << " against the option-free " << codegen::describe(plain);
    }
    for (int64_t n : {5120, 7168, 12288, 14336})
      EXPECT_TRUE(choose_launch_config(with_option(n, x, NormKind::LayerNorm, recompute), 90, 132, 64).staged)
          << "few rows keep their staged rows: " << n;
  }
  NormProblem gated = with_option(5120, DType::BF16, NormKind::RMSNorm, no_option);
  gated.gate = Gate::AfterNorm;
  const LaunchConfig g = choose_launch_config(codegen::resolve_problem(gated), 90, 132);
  EXPECT_TRUE(g.prefetch && g.shared_sums && g.threads == 640) << codegen::describe(g);
  gated.n = 8192;
  EXPECT_FALSE(choose_launch_config(codegen::resolve_problem(gated), 90, 132).prefetch) << "1024 threads: no prefetch";
  // Before the norm in blocks of up to 640 threads (-2026-11-29-h200-dfa438f-widen/).
  gated.gate = Gate::BeforeNorm;
  for (int64_t n : {4608, 5120, 6144}) {
    gated.n = n;
    const LaunchConfig b = choose_launch_config(codegen::resolve_problem(gated), 90, 132);
    EXPECT_TRUE(b.shared_sums && b.cluster == 1 && b.threads == n / 8 && b.prefetch == (n <= 5120)) << n << ": " << codegen::describe(b);
  }
}

// Many aligned 16-bit rows of 2049-4095 with γ or β: shared sums at 16 elements a thread, one
// row a block of N/16 threads, as many blocks an SM as make 1024 threads; RMSNorm's up to 3072
// 8 elements a thread in registers instead, N/8 threads, two blocks an SM, where N/8 fills
// whole warps, else staged as before; 4096, few rows, fused options and less aligned rows keep
// their rules.
TEST(LaunchConfig, ManySixteenBitRowsOf2049To4095ShareSumsInOneBlock) {
  for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm})
    for (DType x : {DType::BF16, DType::F16})
      for (int64_t n : {2049, 2560, 2688, 3072, 3080, 3584, 4095 - 7}) {
        const NormProblem p = with_option(n, x, kind, no_option);
        const LaunchConfig c = choose_launch_config(p, 90, 132);
        const std::string what = std::to_string(n) + ": " + codegen::describe(c);
        EXPECT_TRUE(c.row_in_registers && c.cluster == 1 && c.rows_per_block() == 1) << what;
        EXPECT_EQ(c.vec, 8) << what;
        if (kind == NormKind::RMSNorm && n <= 3072 && n % 256 == 0) {
          EXPECT_FALSE(c.shared_sums) << what;
          EXPECT_EQ(c.threads, n / 8) << what;
          EXPECT_EQ(c.min_blocks_per_sm, 2) << what;
        } else if (kind == NormKind::RMSNorm && n <= 3072) {
          EXPECT_TRUE(c.staged && !c.shared_sums) << what;  // as before the rules
        } else {
          EXPECT_TRUE(c.shared_sums && !c.staged) << what;
          EXPECT_EQ(c.threads, ((n + 15) / 16 + 31) / 32 * 32) << what;
          EXPECT_EQ(c.min_blocks_per_sm, 1024 / c.threads) << what;
        }
        EXPECT_FALSE(choose_launch_config(p, 90, 132, 64).shared_sums) << n;
        // Fused options take the same configs up to 3072 (beyond, fused_short_rows' own rules,
        // where 8-byte vectors would hold the row); LayerNorm's recompute, which those rules
        // leave out, takes the option-free row's at every N here.
        const NormProblem fused = with_option(n, x, kind, [](NormProblem& q) { q.residual = true; });
        if (n <= 3072) EXPECT_EQ(choose_launch_config(fused, 90, 132), c) << n;
        const NormProblem recompute = with_option(n, x, kind, [](NormProblem& q) { q.recompute_from_output = true; });
        const LaunchConfig r = choose_launch_config(recompute, 90, 132);
        if (kind == NormKind::LayerNorm || n <= 3072) EXPECT_EQ(r, c) << n;
        const NormProblem unaligned = with_option(n, x, kind, [](NormProblem& q) { q.alignment = 8; });
        EXPECT_FALSE(choose_launch_config(unaligned, 90, 132).shared_sums) << n;
      }
  EXPECT_FALSE(choose_launch_config(with_option(4096, DType::BF16, NormKind::LayerNorm, no_option), 90, 132).shared_sums);
}

// Many aligned fp32 rows of 16385-57344: blocks of at most 512 threads at 8 elements (16 beyond
// 32768), a cluster of 8, shared sums, as many blocks an SM as make 1024 threads; their
// neighbours (16384, 61440, 65536), few rows, fused options and less aligned rows keep the
// register cluster.
TEST(LaunchConfig, ManyFp32RowsOf16385To57344ShareSumsInSmallerBlocks) {
  for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm}) {
    for (int64_t n : {16385, 20480, 24576, 28672, 32768}) {
      const NormProblem p = with_option(n, DType::F32, kind, no_option);
      const LaunchConfig c = choose_launch_config(p, 90, 132);
      EXPECT_TRUE(c.shared_sums && c.row_in_registers && !c.staged && c.cluster == 8) << codegen::describe(c);
      EXPECT_LE(c.threads, 512);
      EXPECT_EQ(c.vec, 4);
      const int64_t block_slots = ((n + 3) / 4 + 7) / 8;  // 4-wide slots of a block's slice
      EXPECT_EQ(c.threads, ((block_slots + 1) / 2 + 31) / 32 * 32) << "two slots (8 elements) a thread";
      EXPECT_EQ(c.min_blocks_per_sm, 1024 / c.threads);
      EXPECT_FALSE(choose_launch_config(p, 90, 132, 16).shared_sums) << "few rows keep sums in registers";
      const NormProblem fused = with_option(n, DType::F32, kind, [](NormProblem& q) { q.residual = true; });
      EXPECT_FALSE(choose_launch_config(fused, 90, 132).shared_sums) << codegen::describe(fused);
      const NormProblem unaligned = with_option(n, DType::F32, kind, [](NormProblem& q) { q.alignment = 8; });
      EXPECT_FALSE(choose_launch_config(unaligned, 90, 132).shared_sums) << codegen::describe(unaligned);
    }
    for (int64_t n : {36864, 45056, 57344}) {  // 16 elements a thread beyond 32768
      const LaunchConfig c = choose_launch_config(with_option(n, DType::F32, kind, no_option), 90, 132);
      EXPECT_TRUE(c.shared_sums && c.cluster == 8 && c.threads <= 512) << n << ": " << codegen::describe(c);
      EXPECT_EQ(c.threads, ((n / 4 + 7) / 8 / 4 + 31) / 32 * 32) << n;
      EXPECT_EQ(c.min_blocks_per_sm, 1024 / c.threads) << n;
    }
    {  // 16384: a cluster of 1024-thread blocks, sums in registers; 61440-65536 (FittedShapesOnHopper): clusters of 16
      const LaunchConfig c = choose_launch_config(with_option(16384, DType::F32, kind, no_option), 90, 132);
      EXPECT_TRUE(c.threads >= 960 && !c.shared_sums && c.cluster > 1) << codegen::describe(c);
    }
    for (int64_t n : {61440, 65536}) {  // with a fused option, the register cluster as before
      const NormProblem fused = with_option(n, DType::F32, kind, [](NormProblem& q) { q.residual = true; });
      const LaunchConfig c = choose_launch_config(fused, 90, 132);
      EXPECT_TRUE(c.threads >= 960 && !c.shared_sums && c.cluster == 8) << n << ": " << codegen::describe(c);
    }
  }
}

// A single 16-bit row (16-byte aligned, no fused options): RMSNorm of 2049-4096 takes 32
// elements a thread, LayerNorm of 4097-8192 with fp32 γ/β a cluster of 4 on sm_90 (one block
// before it, and with 16-bit γ/β). Two rows and more keep the config of many.
TEST(LaunchConfig, ASingle16BitRowTakesFewerThreadsOrACluster) {
  for (DType weight : {DType::F32, DType::BF16}) {
    NormProblem rms = problem(4096, DType::BF16);
    rms.kind = NormKind::RMSNorm;
    rms.has_bias = false;
    rms.weight_dtype = weight;
    rms = codegen::resolve_problem(rms);
    const LaunchConfig one = choose_launch_config(rms, 90, 132, 1);
    EXPECT_EQ(one.threads, 128) << codegen::describe(one);
    EXPECT_EQ(one.vec, 4) << codegen::describe(one);
    EXPECT_EQ(one.cluster, 1) << codegen::describe(one);
    EXPECT_FALSE(choose_launch_config(rms, 90, 132, 2) == one);

    NormProblem ln = problem(8192, DType::BF16);
    ln.weight_dtype = weight;
    ln = codegen::resolve_problem(ln);
    const LaunchConfig ln_one = choose_launch_config(ln, 90, 132, 1);
    // The column pass, which replaced a cluster of 4 there (FewLong16BitRowsTakeTheColumnPass).
    EXPECT_EQ(ln_one.column_pass, 1) << codegen::describe(ln_one);
    EXPECT_EQ(ln_one.cluster, 1) << codegen::describe(ln_one);
    EXPECT_EQ(choose_launch_config(ln, 90, 132, 2).cluster, 1);
    NormProblem fused = ln;
    fused.residual = true;
    fused = codegen::resolve_problem(fused);
    EXPECT_EQ(choose_launch_config(fused, 90, 132, 1).cluster, 1) << "fused options keep their own rules";
  }
}

// fp32 rows of 4097-8192 aligned to 4 bytes only take 8 elements a thread with prefetch on
// sm_90; up to 4096, and before sm_90, one block of 16 elements a thread as before.
TEST(LaunchConfig, OddFp32RowsBeyond4096PrefetchAtEightElementsAThread) {
  for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm}) {
    NormProblem p = problem(5003, DType::F32, 4);
    p.kind = kind;
    p.has_bias = kind == NormKind::LayerNorm;
    p = codegen::resolve_problem(p);
    const LaunchConfig c = choose_launch_config(p, 90, 132);
    EXPECT_EQ(c.vec, 1) << codegen::describe(c);
    EXPECT_TRUE(c.prefetch && c.row_in_registers && c.cluster == 1) << codegen::describe(c);
    EXPECT_EQ(c.threads, 640) << codegen::describe(c);
    EXPECT_FALSE(choose_launch_config(p, 80, 108).prefetch) << "sm_80 keeps its rule";
    NormProblem short_row = problem(4095, DType::F32, 4);
    short_row.kind = kind;
    short_row.has_bias = p.has_bias;
    short_row = codegen::resolve_problem(short_row);
    EXPECT_EQ(choose_launch_config(short_row, 90, 132).threads, 256) << "16 elements a thread up to 4096";
  }
}

// Few rows on sm_90: the blocks of m's bucket (up to 8) may merge their dγ/dβ in a cluster (the
// tuner tries it); never before sm_90, never without γ or β, never for staged rows or clusters
// sharing a row. The heuristic does not merge: graph replays found it slower (NOTES entry 17).
TEST(LaunchConfig, FewRowsMayMergeTheirBlocksDgammaOnSm90) {
  NormProblem ln = problem(4096, DType::BF16);
  ln.has_bias = true;
  ln = codegen::resolve_problem(ln);
  for (const int64_t m : {1, 2, 5, 37, 199, 4096})
    EXPECT_EQ(choose_launch_config(ln, 90, 132, m).merge, 1) << "m = " << m;
  const LaunchConfig c = choose_launch_config(ln, 90, 132, 8);  // below the column pass, which does not merge
  EXPECT_EQ(merge_for_few_rows(ln, c, 90, 1), 1) << "one row: nothing to merge";
  EXPECT_EQ(merge_for_few_rows(ln, c, 90, 2), 2);
  EXPECT_EQ(merge_for_few_rows(ln, c, 90, 5), 8) << "m's bucket, 8";
  EXPECT_EQ(merge_for_few_rows(ln, c, 90, 199), 8);
  EXPECT_EQ(merge_for_few_rows(ln, c, 80, 199), 1) << "no clusters before sm_90";
  // Several rows a block (a warp per row, 4 a block): the bucket's blocks, not its rows.
  const NormProblem short_rows = codegen::resolve_problem(problem(512, DType::BF16));
  const LaunchConfig s = choose_launch_config(short_rows, 90, 132, 16);
  ASSERT_EQ(s.rows_per_block(), 4) << codegen::describe(s);
  EXPECT_EQ(merge_for_few_rows(short_rows, s, 90, 16), 4);
  NormProblem none = problem(4096, DType::BF16);
  none.has_weight = none.has_bias = false;
  none = codegen::resolve_problem(none);
  EXPECT_EQ(merge_for_few_rows(none, choose_launch_config(none, 90, 132, 199), 90, 199), 1) << "no dγ/dβ to merge";
  const NormProblem staged = codegen::resolve_problem(problem(12288, DType::BF16));
  const LaunchConfig st = choose_launch_config(staged, 90, 132, 199);
  if (st.staged) EXPECT_EQ(merge_for_few_rows(staged, st, 90, 199), 1) << codegen::describe(st);
}

TEST(LaunchConfig, CheckRejectsMergesThatCannotRun) {
  const NormProblem p = codegen::resolve_problem(problem(4096, DType::BF16));
  LaunchConfig c = choose_launch_config(p, 90, 132, 8);  // below the column pass, which does not merge
  c.merge = merge_for_few_rows(p, c, 90, 199);
  ASSERT_EQ(c.merge, 8);
  EXPECT_NO_THROW(codegen::check_launch_config(p, c));
  for (int bad : {0, 3, 16}) {
    LaunchConfig b = c;
    b.merge = bad;
    EXPECT_THROW(codegen::check_launch_config(p, b), std::invalid_argument) << bad;
  }
  LaunchConfig shared_row = choose_launch_config(codegen::resolve_problem(problem(65536, DType::F32)), 90);
  ASSERT_GT(shared_row.cluster, 1);
  shared_row.merge = 2;
  EXPECT_THROW(codegen::check_launch_config(codegen::resolve_problem(problem(65536, DType::F32)), shared_row),
               std::invalid_argument);
  LaunchConfig staged = choose_launch_config(codegen::resolve_problem(problem(12288, DType::BF16)), 80);
  ASSERT_TRUE(staged.staged);
  staged.merge = 2;
  EXPECT_THROW(codegen::check_launch_config(codegen::resolve_problem(problem(12288, DType::BF16)), staged),
               std::invalid_argument);
  NormProblem none = problem(4096, DType::BF16);
  none.has_weight = false;
  none = codegen::resolve_problem(none);
  EXPECT_THROW(codegen::check_launch_config(none, c), std::invalid_argument);
  EXPECT_NE(codegen::describe(c).find("merge=8"), std::string::npos) << codegen::describe(c);
}

// Shared sums take shared memory per block for every sum (twice as many with parallel norms):
// the heuristic's configs must fit a block, and their blocks per SM the SM, or not use them.
TEST(LaunchConfig, HeuristicSharedMemoryFitsTheBlockAndTheSm) {
  for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm})
    for (DType x : {DType::BF16, DType::F32})
      for (bool parallel : {false, true})
        for (int64_t n : {4096, 5120, 8192, 12288, 16384, 32768, 65536, 131072, 262144}) {
          NormProblem p = problem(n, x);
          p.kind = kind;
          p.weight_dtype = DType::F32;
          p.has_bias = kind == NormKind::LayerNorm;
          p.parallel = parallel;
          p = codegen::resolve_problem(p);
          LaunchConfig c;
          ASSERT_NO_THROW(c = choose_launch_config(p, 90, 132)) << codegen::describe(p);
          const size_t bytes = codegen::dynamic_shared_bytes(p, c);
          EXPECT_LE(bytes, codegen::max_stage_bytes(90)) << codegen::describe(p) << ": " << codegen::describe(c);
          EXPECT_LE(c.min_blocks_per_sm * (bytes + codegen::static_merge_bytes(p, c) + codegen::kStaticSharedReserve),
                    codegen::max_shared_per_sm(90))
              << codegen::describe(p) << ": " << codegen::describe(c);
        }
}

// Few rows keep sums in registers where one block holds the row, but rows a cluster shares take
// shared sums at any M; fused options that transform rows as loaded (recompute) pack them too,
// so they get two blocks per SM as well.
TEST(LaunchConfig, SharedSumsAtFewRowsAndUnderFusedOptions) {
  auto ln = [](int64_t n, bool recompute) {
    NormProblem p = problem(n, DType::BF16);
    p.weight_dtype = DType::F32;
    p.has_bias = true;
    p.recompute_from_output = recompute;
    return codegen::resolve_problem(p);
  };
  EXPECT_TRUE(choose_launch_config(ln(262144, false), 90, 132, 256).shared_sums);
  EXPECT_TRUE(choose_launch_config(ln(8192, false), 90, 132).shared_sums);
  EXPECT_FALSE(choose_launch_config(ln(8192, false), 90, 132, 199).shared_sums);
  EXPECT_EQ(choose_launch_config(ln(8192, false), 90, 132).min_blocks_per_sm, 2);
  // Unmerged: merged pairs of shared-sums blocks measured slower (the tuner still tries them).
  EXPECT_EQ(choose_launch_config(ln(8192, false), 90, 132).merge, 1);
  const LaunchConfig recompute = choose_launch_config(ln(8192, true), 90, 132);
  EXPECT_TRUE(recompute.shared_sums);
  EXPECT_EQ(recompute.min_blocks_per_sm, 2);
  NormProblem fp32 = ln(8192, true);
  fp32.x_dtype = fp32.dy_dtype = fp32.dx_dtype = DType::F32;
  EXPECT_EQ(choose_launch_config(codegen::resolve_problem(fp32), 90, 132, 65536).min_blocks_per_sm, 1)
      << "fp32 rows stay unpacked: one block per SM";
  // Fitted to the fused options' exhaustive tuning (bench/results/2026-11-24-h100-7dafbbd-fused):
  // parallel LayerNorms of a row one block holds, 8 elements a thread with shared sums (16 leave
  // room for one block per SM), parallel RMSNorms 16 at two blocks per SM. The gate, since packed
  // rows hold z (bench/results/2026-11-24-h100-3e82f92-gate/): shared sums, in bf16 8 elements a
  // thread (before the norm prefetching), in fp16 16 at two blocks per SM.
  NormProblem parallel = ln(8192, false);
  parallel.parallel = true;
  const LaunchConfig two_norms = choose_launch_config(codegen::resolve_problem(parallel), 90, 132);
  EXPECT_TRUE(two_norms.shared_sums);
  EXPECT_EQ(two_norms.vec, 8);
  // bf16 LayerNorms at 8192: a cluster of two 512-thread blocks, two an SM; fp16 one block of
  // 1024 (bench/results/2026-11-24-h100-2e41f5d-tune-gaps/).
  EXPECT_EQ(codegen::describe(two_norms),
            "threads=512 threads_per_row=512 vec=8 registers cluster=2 min_blocks=2 shared_sums shared_weights");
  NormProblem parallel_fp16 = parallel;
  parallel_fp16.x_dtype = parallel_fp16.dy_dtype = parallel_fp16.dx_dtype = DType::F16;
  EXPECT_EQ(codegen::describe(choose_launch_config(codegen::resolve_problem(parallel_fp16), 90, 132)),
            "threads=1024 threads_per_row=1024 vec=8 registers shared_sums shared_weights");
  NormProblem rms_parallel = parallel;
  rms_parallel.kind = NormKind::RMSNorm;
  rms_parallel.has_bias = false;
  const LaunchConfig two_rms = choose_launch_config(codegen::resolve_problem(rms_parallel), 90, 132);
  EXPECT_TRUE(two_rms.shared_sums);
  EXPECT_EQ(two_rms.threads, 512);
  EXPECT_EQ(two_rms.min_blocks_per_sm, 2);
  for (Gate order : {Gate::AfterNorm, Gate::BeforeNorm}) {
    NormProblem gated = ln(8192, false);
    gated.kind = NormKind::RMSNorm;
    gated.has_bias = false;
    gated.gate = order;
    const LaunchConfig g = choose_launch_config(codegen::resolve_problem(gated), 90, 132);
    // Neither order prefetches, and fp16 takes bf16's block (since σ(z) is approximate, the
    // prefetch and 16 elements a thread spill: bench/results/2026-11-29-h200-539569c-sigmoid-2/).
    EXPECT_EQ(codegen::describe(g), "threads=1024 threads_per_row=1024 vec=8 registers shared_sums");
    gated.x_dtype = gated.dy_dtype = gated.dx_dtype = DType::F16;
    EXPECT_EQ(codegen::describe(choose_launch_config(codegen::resolve_problem(gated), 90, 132)),
              "threads=1024 threads_per_row=1024 vec=8 registers shared_sums");
  }
}

// Fitted to exhaustive tuning of bf16 4096 with fused options at M = 16384 (bench/results/
// 2026-11-24-h100-{9445af3-few-groups,0fb0bd3-racecheck}/tune-fused-4096.txt): where the
// option-free rows are held in 8-byte vectors, the options take their own rule for many rows,
// and the option-free rule and few rows keep theirs.
TEST(LaunchConfig, FusedOptionsOnRowsOf4096TakeTheirOwnRuleForManyRows) {
  auto p4096 = [](NormKind kind, void (*option)(NormProblem&)) { return with_option(4096, DType::BF16, kind, option); };
  const NormProblem none = p4096(NormKind::LayerNorm, no_option);
  const LaunchConfig plain = choose_launch_config(none, 90, 132, 16384);
  EXPECT_EQ(codegen::describe(plain), "threads=256 threads_per_row=256 vec=4 registers");

  const LaunchConfig parallel =
      choose_launch_config(p4096(NormKind::LayerNorm, [](NormProblem& p) { p.parallel = true; }), 90, 132, 16384);
  // Parallel LayerNorms, since packed rows hold dy1 (-9f89c00-parallel/): 8 elements a thread
  // with shared sums, two blocks an SM. RMSNorms as the other options.
  EXPECT_EQ(codegen::describe(parallel), "threads=512 threads_per_row=512 vec=4 registers min_blocks=2 shared_sums");
  const LaunchConfig rms_parallel =
      choose_launch_config(p4096(NormKind::RMSNorm, [](NormProblem& p) { p.parallel = true; }), 90, 132, 16384);
  EXPECT_EQ(codegen::describe(rms_parallel), "threads=256 threads_per_row=256 vec=8 registers min_blocks=4 shared_sums");
  // The gate: a slot of 8 a thread, two blocks an SM, with shared sums since packed rows hold z
  // (bench/results/2026-11-24-h100-3e82f92-gate/); fp16 as bf16 (it had taken 16 elements a
  // thread after the norm, which spill since σ(z) is approximate: -539569c-sigmoid-2/).
  for (Gate order : {Gate::AfterNorm, Gate::BeforeNorm}) {
    NormProblem gated = p4096(NormKind::RMSNorm, no_option);
    gated.gate = order;
    EXPECT_EQ(codegen::describe(choose_launch_config(codegen::resolve_problem(gated), 90, 132, 16384)),
              "threads=512 threads_per_row=512 vec=8 registers min_blocks=2 shared_sums");
    gated.x_dtype = gated.dy_dtype = gated.dx_dtype = DType::F16;
    EXPECT_EQ(codegen::describe(choose_launch_config(codegen::resolve_problem(gated), 90, 132, 16384)),
              "threads=512 threads_per_row=512 vec=8 registers min_blocks=2 shared_sums");
  }
  const NormProblem residual = p4096(NormKind::RMSNorm, [](NormProblem& p) { p.residual = true; });
  EXPECT_EQ(codegen::describe(choose_launch_config(residual, 90, 132, 16384)),
            "threads=256 threads_per_row=256 vec=8 registers min_blocks=4 shared_sums");
  // LayerNorm recomputing x̂ from y and β, few rows, another N, or sm_80: the rules as before.
  const NormProblem recompute = p4096(NormKind::LayerNorm, [](NormProblem& p) { p.recompute_from_output = true; });
  EXPECT_EQ(choose_launch_config(recompute, 90, 132, 16384), plain);
  EXPECT_EQ(codegen::describe(choose_launch_config(
                p4096(NormKind::RMSNorm, [](NormProblem& p) { p.recompute_from_output = true; }), 90, 132, 16384)),
            "threads=256 threads_per_row=256 vec=8 registers min_blocks=4 shared_sums");
  // On a memory-rich device (an H200) LayerNorm's recompute takes the shared sums of the other
  // options (session 62: bf16 1.12x, fp16 1.05x, bf16 γ 1.20x in exhaustive tuning), in fp16 and
  // with 16-bit γ too; at 3840 and 4608 its rule already was that.
  for (DType x : {DType::BF16, DType::F16})
    for (bool same_weight : {false, true}) {
      NormProblem rich = with_option(4096, x, NormKind::LayerNorm, [](NormProblem& p) { p.recompute_from_output = true; });
      if (same_weight) rich.weight_dtype = x;
      rich = codegen::resolve_problem(rich);
      EXPECT_EQ(codegen::describe(choose_launch_config(rich, 90, 132, 16384, 18.4)),
                "threads=256 threads_per_row=256 vec=8 registers min_blocks=4 shared_sums")
          << codegen::describe(rich);
      for (int64_t n : {3840, 4608}) {
        NormProblem beside = rich;
        beside.n = n;
        EXPECT_TRUE(choose_launch_config(beside, 90, 132, 67108864 / n, 18.4).shared_sums) << n;
      }
    }
  EXPECT_EQ(choose_launch_config(residual, 90, 132, 8), choose_launch_config(none, 90, 132, 8));
  NormProblem residual_3072 = residual;
  residual_3072.n = 3072;
  NormProblem none_3072 = none;
  none_3072.n = 3072;
  // (At 3072 the fused options take the option-free rules of 2049-4095: LayerNorm's shared
  // sums, RMSNorm's 8 elements a thread.)
  EXPECT_TRUE(choose_launch_config(none_3072, 90, 132, 16384).shared_sums);
  NormProblem rms_none_3072 = p4096(NormKind::RMSNorm, no_option);
  rms_none_3072.n = 3072;
  EXPECT_EQ(choose_launch_config(residual_3072, 90, 132, 16384), choose_launch_config(rms_none_3072, 90, 132, 16384));
  EXPECT_EQ(choose_launch_config(residual, 80, 108, 16384), choose_launch_config(none, 80, 108, 16384));
}

// Memory-rich devices (an H200), many 16-bit rows of 1024 with parallel norms, the residual or
// the gate: one row a block of N/8 threads, where a warp a row took 162-255 registers (session
// 62: 1.1-2.1x in bench); the option-free rows and the recompute keep their warp rows, and so do
// 768 and the H100's rules. fp16 parallel norms at 2048: two quads a thread with shared sums
// (1.49-1.65x); bf16 keeps its block of four quads.
TEST(LaunchConfig, MemoryRichShortFusedRowsLeaveTheirWarpRows) {
  const std::vector<void (*)(NormProblem&)> leaving = {
      [](NormProblem& p) { p.parallel = true; }, [](NormProblem& p) { p.residual = true; },
      [](NormProblem& p) { p.gate = Gate::AfterNorm; }, [](NormProblem& p) { p.gate = Gate::BeforeNorm; }};
  for (DType x : {DType::BF16, DType::F16})
    for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm})
      for (auto option : leaving) {
        NormProblem p = with_option(1024, x, kind, option);
        if (p.gate != Gate::None && kind == NormKind::LayerNorm) continue;
        p = codegen::resolve_problem(p);
        const LaunchConfig c = choose_launch_config(p, 90, 132, 65536, 18.4);
        EXPECT_EQ(codegen::describe(c), "threads=128 threads_per_row=128 vec=4 registers") << codegen::describe(p);
        EXPECT_EQ(choose_launch_config(p, 90, 132, 65536).threads_per_row, 32) << "the H100's rules";
        NormProblem shorter = p;
        shorter.n = 768;
        EXPECT_EQ(choose_launch_config(shorter, 90, 132, 87381, 18.4).threads_per_row, 32) << codegen::describe(shorter);
      }
  for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm})
    for (auto option : std::vector<void (*)(NormProblem&)>{no_option, [](NormProblem& p) { p.recompute_from_output = true; }}) {
      const NormProblem p = with_option(1024, DType::BF16, kind, option);
      EXPECT_NE(codegen::describe(choose_launch_config(p, 90, 132, 65536, 18.4)),
                "threads=128 threads_per_row=128 vec=4 registers")
          << codegen::describe(p);
    }
  for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm}) {
    const NormProblem fp16 = with_option(2048, DType::F16, kind, [](NormProblem& p) { p.parallel = true; });
    EXPECT_EQ(codegen::describe(choose_launch_config(fp16, 90, 132, 32768, 18.4)),
              "threads=256 threads_per_row=256 vec=4 registers min_blocks=4 shared_sums");
    EXPECT_EQ(codegen::describe(choose_launch_config(fp16, 90, 132, 32768)), "threads=128 threads_per_row=128 vec=4 registers");
    const NormProblem bf16 = with_option(2048, DType::BF16, kind, [](NormProblem& p) { p.parallel = true; });
    EXPECT_EQ(codegen::describe(choose_launch_config(bf16, 90, 132, 32768, 18.4)), "threads=128 threads_per_row=128 vec=4 registers");
  }
}

// Fitted to exhaustive tuning of bf16 32768 with fused options at M = 2048 (bench/results/
// 2026-11-24-h100-e12b52f-fused-tune/tune-fused.txt; the gate: -3e82f92-gate/): where a cluster
// shares the row, parallel norms and the gate take 8 elements a thread (parallel norms in
// 1024-thread blocks since packed rows hold dy1, -9f89c00-parallel/; the gate prefetching in
// bf16 after the norm), recompute blocks of 1024 threads (in fp16 not RMSNorm's recompute);
// longer rows, and the elementwise options at any length, the option-free row's config
// (-8d898cb-fused-cluster-rule/).
TEST(LaunchConfig, FusedOptionsInClustersUpTo32768TakeTheirOwnRule) {
  auto at = [](int64_t n, NormKind kind, void (*option)(NormProblem&), DType x = DType::BF16) {
    return choose_launch_config(with_option(n, x, kind, option), 90, 132, 2048);
  };
  EXPECT_EQ(codegen::describe(at(32768, NormKind::LayerNorm, no_option)),
            "threads=512 threads_per_row=512 vec=8 registers cluster=8 prefetch min_blocks=2 shared_sums shared_weights");
  for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm})
    EXPECT_EQ(codegen::describe(at(32768, kind, [](NormProblem& p) { p.parallel = true; })),
              "threads=1024 threads_per_row=1024 vec=8 registers cluster=4 shared_sums shared_weights");
  // The gate's clusters do not prefetch (since σ(z) is approximate: -539569c-sigmoid-2/).
  const std::string gate_cluster = "threads=512 threads_per_row=512 vec=8 registers cluster=8 min_blocks=2 shared_sums";
  EXPECT_EQ(codegen::describe(at(32768, NormKind::RMSNorm, [](NormProblem& p) { p.gate = Gate::AfterNorm; })),
            gate_cluster);
  EXPECT_EQ(codegen::describe(at(32768, NormKind::RMSNorm, [](NormProblem& p) { p.gate = Gate::BeforeNorm; })),
            gate_cluster);
  for (auto gate : {+[](NormProblem& p) { p.gate = Gate::AfterNorm; }, +[](NormProblem& p) { p.gate = Gate::BeforeNorm; }})
    EXPECT_EQ(codegen::describe(at(32768, NormKind::RMSNorm, gate, DType::F16)), gate_cluster) << "fp16";
  // Up to 24576 a pair of blocks of 16 elements a thread, after the norm and in bf16 before it
  // (-2026-11-29-h200-{dfa438f-widen,34d0d11-gate-rules}/).
  for (DType x : {DType::BF16, DType::F16})
    for (Gate order : {Gate::AfterNorm, Gate::BeforeNorm})
      for (int64_t n : {16392, 20480, 24576}) {
        NormProblem gated = with_option(n, x, NormKind::RMSNorm, no_option);
        gated.gate = order;
        const LaunchConfig c = choose_launch_config(codegen::resolve_problem(gated), 90, 132, 2048);
        const std::string what = std::to_string(n) + ": " + codegen::describe(c);
        if (order == Gate::BeforeNorm && x == DType::F16) {
          EXPECT_EQ(c.cluster, 8) << what;
          continue;
        }
        // Two blocks of the row's slots of 8, two a thread: a quarter of the slots a block.
        EXPECT_TRUE(c.cluster == 2 && c.threads == codegen::warp_threads(n / 8, 4) && c.vec == 8 && c.shared_sums &&
                    !c.prefetch)
            << what;
      }
  EXPECT_EQ(at(24584, NormKind::RMSNorm, [](NormProblem& p) { p.gate = Gate::AfterNorm; }).cluster, 8);
  for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm})
    EXPECT_EQ(codegen::describe(at(32768, kind, [](NormProblem& p) { p.recompute_from_output = true; })),
              "threads=1024 threads_per_row=1024 vec=8 registers cluster=2 shared_sums");
  // The elementwise options take the option-free row's config wherever a cluster shares the row,
  // but where option-free RMSNorm rows copy the next row ahead (from 65537: not yet timed with them).
  for (DType x : {DType::BF16, DType::F16})
    for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm})
      for (int64_t n : {20480, 32768, 65536, 131072, 262144})
        for (auto option : {+[](NormProblem& p) { p.residual = true; },
                            +[](NormProblem& p) {
                              p.residual = p.zero_centered_weight = p.rowscale = true;
                              p.dropout = DropoutMask::Bits;
                            }}) {
          auto with = [&](void (*o)(NormProblem&)) {
            return choose_launch_config(with_option(n, x, kind, o), 90, 132, 65536 * 1024 / n);
          };
          EXPECT_GT(with(option).cluster, 1) << n;
          if (kind == NormKind::RMSNorm && n > 65536) {
            EXPECT_EQ(with(option).shared_prefetch, 0) << n;
            EXPECT_EQ(with(no_option).shared_prefetch, 1) << n;
            continue;
          }
          EXPECT_EQ(codegen::describe(with(option)), codegen::describe(with(no_option))) << n;
        }
  // In fp16 RMSNorm's recompute keeps the rule before (the recompute rule measured slower).
  EXPECT_EQ(codegen::describe(at(32768, NormKind::RMSNorm, [](NormProblem& p) { p.recompute_from_output = true; },
                                 DType::F16)),
            "threads=512 threads_per_row=512 vec=8 registers cluster=4 min_blocks=2 shared_sums");
  EXPECT_EQ(at(32768, NormKind::LayerNorm, [](NormProblem& p) { p.recompute_from_output = true; }, DType::F16).threads,
            1024);
  EXPECT_EQ(at(65536, NormKind::LayerNorm, [](NormProblem& p) { p.parallel = true; }).cluster,
            at(65536, NormKind::LayerNorm, no_option).cluster);
}

// fp32 rows of 3073-4096 with many rows: 8 elements a thread in 16-byte vectors, prefetching
// the next row, in blocks of up to 512 threads (session 12's exhaustive sweep: LN 4096 279 us
// against 291 staged, RMS 278 against 294); not at 3072, where it measured 1.18x the best.
TEST(LaunchConfig, Fp32RowsUpTo4096PrefetchInBlocksOfUpTo512Threads) {
  for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm}) {
    const LaunchConfig c = choose_launch_config(with_option(4096, DType::F32, kind, no_option), 90, 132, 16384);
    EXPECT_EQ(codegen::describe(c), "threads=512 threads_per_row=512 vec=4 registers prefetch");
    EXPECT_EQ(codegen::describe(choose_launch_config(with_option(2048, DType::F32, kind, no_option), 90, 132, 32768)),
              "threads=256 threads_per_row=256 vec=4 registers prefetch");
    EXPECT_FALSE(choose_launch_config(with_option(5120, DType::F32, kind, no_option), 90, 132, 13107).prefetch);
    EXPECT_NE(choose_launch_config(with_option(3072, DType::F32, kind, no_option), 90, 132, 21845).threads, 384);
  }
}

// fp32 rows of 4097-8192 with many rows: one block holds the row in registers, 16 elements a
// thread, not staged (session 12's exhaustive sweep: 3.5-8.7% over staged); few rows keep
// their rule (prefetching the next row).
TEST(LaunchConfig, Fp32RowsOf4097To8192SitInRegistersForManyRows) {
  for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm})
    for (int64_t n : {5120, 7168, 8192}) {
      const NormProblem p = with_option(n, DType::F32, kind, no_option);
      const LaunchConfig many = choose_launch_config(p, 90, 132, 65536 * 1024 / n);
      EXPECT_FALSE(many.staged) << n;
      EXPECT_TRUE(many.row_in_registers && many.cluster == 1) << n;
      EXPECT_EQ(many.threads, n / 16) << n;
      EXPECT_TRUE(choose_launch_config(p, 90, 132, 32).prefetch) << n;  // (64 rows of 8192: the column pass)
      EXPECT_TRUE(choose_launch_config(p, 80, 108, 65536 * 1024 / n).staged) << "sm_80 keeps staged rows, " << n;
    }
}

// The heuristic's config runs every problem it is asked for: each fused option alone and all
// those that go together, each affine form (shared sums need dγ or dβ to hold), both weight
// dtypes, 16-bit and fp32 rows, few rows and many, sm_80 and sm_90. (The gate's shared-sums
// rule of ba92ca2 gave a problem without γ shared sums; the GPU tests caught it, this catches
// it on any machine.) Its rules switch at many N (block shapes, clusters, shared sums,
// prefetch, the column pass at few rows), so the option-free LayerNorm and RMSNorm take every N
// up to 20480 and every ~1% beyond to 1.1M; the other options and affine forms every 7th N
// below 20480. A rule whose shape another rule's bounds reject shows here.
TEST(LaunchConfig, TheHeuristicsConfigRunsEveryOptionAndAffineForm) {
  const std::vector<void (*)(NormProblem&)> options = {
      no_option,
      [](NormProblem& p) { p.residual = true; },
      [](NormProblem& p) { p.gate = Gate::AfterNorm; },
      [](NormProblem& p) { p.gate = Gate::BeforeNorm; },
      [](NormProblem& p) { p.parallel = true; },
      [](NormProblem& p) { p.recompute_from_output = true; },
      [](NormProblem& p) {
        p.residual = p.zero_centered_weight = p.rowscale = true;
        p.dropout = DropoutMask::Bits;
      },
  };
  int64_t checked = 0;
  for (int64_t n = 1; n <= 1100000; n = n < 20480 ? n + 1 : n + 1 + n / 97)
    for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm})
      for (DType x : {DType::BF16, DType::F16, DType::F32})
        for (DType weight : {DType::F32, x})
          for (int affine = 3; affine >= 0; --affine)
            for (auto option : options) {
              const bool plain = option == options[0] && affine == 3;
              if (!plain && n < 20480 && n % 7 != 0) continue;
              if (weight == x && x == DType::F32 && !plain) continue;  // the same problems again
              NormProblem p = with_option(n, x, kind, option);
              p.weight_dtype = weight;
              p.has_weight = affine & 1;
              p.has_bias = kind == NormKind::LayerNorm && (affine & 2);
              if (p.gate != Gate::None && kind != NormKind::RMSNorm) continue;
              if (p.zero_centered_weight && !p.has_weight) continue;
              try {
                codegen::validate_problem(p);
              } catch (const std::invalid_argument&) {
                continue;  // a combination the library rejects
              }
              p = codegen::resolve_problem(p);
              // An A100, an H100, an H200 (memory-rich: its own rules).
              for (auto [sm, rate] : {std::pair{80, 0.0}, std::pair{90, 12.8}, std::pair{90, 18.8}})
                for (int64_t m : {int64_t{1}, int64_t{37}, int64_t{199}, 67108864 / n + 1, int64_t{-1}}) {
                  LaunchConfig c;
                  EXPECT_NO_THROW(c = choose_launch_config(p, sm, sm == 90 ? 132 : 108, m, rate))
                      << codegen::describe(p) << " sm_" << sm << " M=" << m << " rate " << rate;
                  EXPECT_NO_THROW(codegen::check_launch_config(p, c))
                      << codegen::describe(p) << " sm_" << sm << " M=" << m << " rate " << rate << ": "
                      << codegen::describe(c);
                  ++checked;
                }
            }
  EXPECT_GT(checked, 4500000);
}

// The kernel holds rows packed (kPackedRows, emitted from codegen::packs_rows) only with shared
// sums and 16-bit rows, whatever the fused options (those that transform or add to the rows as
// they are loaded redo it for dx).
TEST(LaunchConfig, PacksRowsOnlyUnderSharedSumsFor16BitRows) {
  NormProblem p = problem(8192, DType::BF16);
  LaunchConfig c = choose_launch_config(p, 90, 132);
  ASSERT_TRUE(c.shared_sums);
  EXPECT_TRUE(codegen::packs_rows(p, c));
  EXPECT_NE(codegen::generate_backward_source(p, c).text.find("constexpr bool kPackedRows = true;"), std::string::npos);
  LaunchConfig registers = c;
  registers.shared_sums = false;
  EXPECT_FALSE(codegen::packs_rows(p, registers));
  EXPECT_FALSE(codegen::packs_rows(problem(8192, DType::F32), c));
  for (auto option : {+[](NormProblem& q) { q.parallel = true; }, +[](NormProblem& q) { q.recompute_from_output = true; },
                      +[](NormProblem& q) { q.kind = NormKind::RMSNorm; q.gate = Gate::AfterNorm; }}) {
    NormProblem fused = p;
    option(fused);
    EXPECT_TRUE(codegen::packs_rows(codegen::resolve_problem(fused), c)) << codegen::describe(fused);
  }
  NormProblem residual = p;
  residual.residual = true;
  EXPECT_TRUE(codegen::packs_rows(codegen::resolve_problem(residual), c));
}

// LayerNorm's 16-bit rows with fp32 γ/β in one 1024-thread block with shared sums take 4-wide
// vectors (a warp's fp32 γ loads in whole sectors); with 16-bit γ/β, for RMSNorm and in
// clusters the 8-wide ones stay.
TEST(LaunchConfig, LayerNormRowsOfOneWideBlockWithFp32WeightsTakeFourWideVectors) {
  const NormProblem ln = with_option(16384, DType::BF16, NormKind::LayerNorm, no_option);
  const LaunchConfig c = choose_launch_config(ln, 90, 132);
  EXPECT_EQ(c.vec, 4) << codegen::describe(c);
  EXPECT_EQ(c.threads, 1024);
  EXPECT_TRUE(c.shared_sums && c.cluster == 1 && c.row_in_registers);
  EXPECT_EQ(codegen::elements_per_thread(ln, c), 16);
  NormProblem same = ln;
  same.weight_dtype = DType::BF16;
  EXPECT_EQ(choose_launch_config(codegen::resolve_problem(same), 90, 132).vec, 8);
  EXPECT_EQ(choose_launch_config(with_option(8192, DType::BF16, NormKind::LayerNorm, no_option), 90, 132).vec, 8);
  EXPECT_EQ(choose_launch_config(with_option(32768, DType::BF16, NormKind::LayerNorm, no_option), 90, 132).vec, 8);
  EXPECT_EQ(choose_launch_config(with_option(16384, DType::BF16, NormKind::LayerNorm, no_option), 80, 108).vec, 8);
}

// The column pass (templates/column_pass.cuh) at few rows: 16-bit, 16-byte aligned rows of
// 4096-65536 without fused options from 16 rows (LayerNorm beyond 4096 and RMSNorm of 8193-16384
// at fewer too), about 4 rows a lane; never for fp32 rows, fused options, many rows or rows beyond the L2 budget.
TEST(LaunchConfig, FewLong16BitRowsTakeTheColumnPass) {
  auto norm = [](NormKind kind, int64_t n, DType x, int alignment = 16) {
    NormProblem p = problem(n, x, alignment);
    p.kind = kind;
    p.weight_dtype = DType::F32;
    p.has_bias = kind == NormKind::LayerNorm;
    return codegen::resolve_problem(p);
  };
  const NormProblem ln8192 = norm(NormKind::LayerNorm, 8192, DType::BF16);
  const LaunchConfig at199 = choose_launch_config(ln8192, 90, 132, 199);
  EXPECT_EQ(at199.column_pass, 64) << codegen::describe(at199);
  EXPECT_EQ(at199.threads, 512);
  EXPECT_EQ(at199.vec, 8);
  const LaunchConfig at37 = choose_launch_config(ln8192, 90, 132, 37);
  EXPECT_EQ(at37.column_pass, 16) << codegen::describe(at37);
  EXPECT_EQ(at37.threads, 256);
  EXPECT_EQ(choose_launch_config(norm(NormKind::LayerNorm, 16384, DType::F16), 90, 132, 37).threads, 512);
  EXPECT_EQ(choose_launch_config(ln8192, 90, 132, 1).column_pass, 1) << "one LayerNorm row beyond 4096";
  EXPECT_EQ(choose_launch_config(norm(NormKind::RMSNorm, 8192, DType::BF16), 90, 132, 1).column_pass, 0);
  EXPECT_EQ(choose_launch_config(norm(NormKind::RMSNorm, 8192, DType::BF16), 90, 132, 199).column_pass, 64);
  EXPECT_EQ(choose_launch_config(ln8192, 80, 108, 100).column_pass, 32) << "no cluster or sm_90 feature needed";
  EXPECT_EQ(choose_launch_config(ln8192, 90, 132, 8).column_pass, 2) << "LayerNorm beyond 4096 at any few rows";
  EXPECT_EQ(choose_launch_config(norm(NormKind::LayerNorm, 4096, DType::BF16), 90, 132, 8).column_pass, 0);
  EXPECT_EQ(choose_launch_config(norm(NormKind::LayerNorm, 4096, DType::BF16), 90, 132, 16).column_pass, 4);
  EXPECT_EQ(choose_launch_config(norm(NormKind::RMSNorm, 8192, DType::BF16), 90, 132, 4).column_pass, 0);
  EXPECT_EQ(choose_launch_config(norm(NormKind::RMSNorm, 16384, DType::BF16), 90, 132, 4).column_pass, 1);
  EXPECT_EQ(choose_launch_config(norm(NormKind::RMSNorm, 16384, DType::BF16), 90, 132, 1).column_pass, 0);
  EXPECT_EQ(choose_launch_config(norm(NormKind::RMSNorm, 32768, DType::BF16), 90, 132, 8).column_pass, 0);
  EXPECT_EQ(choose_launch_config(ln8192, 90, 132, 4096).column_pass, 0) << "many rows";
  EXPECT_EQ(choose_launch_config(ln8192, 90, 132).column_pass, 0) << "rows not known";
  EXPECT_EQ(choose_launch_config(norm(NormKind::LayerNorm, 8192, DType::F32), 90, 132, 199).column_pass, 0);
  // fp32 rows of 8192-32768: at 33-64 rows (17-32 from 16384), LayerNorm's at 65-128 too, in
  // 512-thread blocks.
  const LaunchConfig fp32_37 = choose_launch_config(norm(NormKind::RMSNorm, 16384, DType::F32), 90, 132, 37);
  EXPECT_EQ(fp32_37.column_pass, 16) << codegen::describe(fp32_37);
  EXPECT_EQ(fp32_37.threads, 512);
  EXPECT_EQ(fp32_37.vec, 4);
  EXPECT_EQ(choose_launch_config(norm(NormKind::LayerNorm, 8192, DType::F32), 90, 132, 128).column_pass, 32);
  EXPECT_EQ(choose_launch_config(norm(NormKind::RMSNorm, 8192, DType::F32), 90, 132, 128).column_pass, 0);
  EXPECT_EQ(choose_launch_config(norm(NormKind::LayerNorm, 32768, DType::F32), 90, 132, 16).column_pass, 0);
  EXPECT_EQ(choose_launch_config(norm(NormKind::LayerNorm, 32768, DType::F32), 90, 132, 17).column_pass, 8);
  EXPECT_EQ(choose_launch_config(norm(NormKind::RMSNorm, 16384, DType::F32), 90, 132, 32).column_pass, 8);
  EXPECT_EQ(choose_launch_config(norm(NormKind::RMSNorm, 8192, DType::F32), 90, 132, 32).column_pass, 0);
  EXPECT_EQ(choose_launch_config(norm(NormKind::LayerNorm, 4096, DType::F32), 90, 132, 37).column_pass, 0);
  EXPECT_EQ(choose_launch_config(norm(NormKind::LayerNorm, 2048, DType::BF16), 90, 132, 199).column_pass, 0);
  EXPECT_EQ(choose_launch_config(norm(NormKind::LayerNorm, 32768, DType::BF16), 90, 132, 64).column_pass, 16);
  EXPECT_EQ(choose_launch_config(norm(NormKind::LayerNorm, 65536, DType::BF16), 90, 132, 8).column_pass, 2);
  EXPECT_TRUE(choose_launch_config(norm(NormKind::LayerNorm, 65536, DType::BF16), 90, 132, 4).grid)
      << "up to 4 rows of 65536 the grid (grid_for_few_rows)";
  EXPECT_EQ(choose_launch_config(norm(NormKind::LayerNorm, 32768, DType::BF16), 90, 132, 2).column_pass, 1);
  EXPECT_EQ(choose_launch_config(norm(NormKind::RMSNorm, 65536, DType::BF16), 90, 132, 2).column_pass, 0);
  EXPECT_EQ(choose_launch_config(norm(NormKind::LayerNorm, 65536, DType::BF16), 90, 132, 128).column_pass, 0)
      << "x and dy beyond the L2 budget";
  EXPECT_EQ(choose_launch_config(norm(NormKind::LayerNorm, 131072, DType::BF16), 90, 132, 16).column_pass, 0)
      << "not timed beyond 65536";
  EXPECT_EQ(choose_launch_config(norm(NormKind::LayerNorm, 5003, DType::BF16, 2), 90, 132, 199).column_pass, 0);
  NormProblem residual = ln8192;
  residual.residual = true;
  EXPECT_EQ(choose_launch_config(codegen::resolve_problem(residual), 90, 132, 199).column_pass, 0);
}

TEST(LaunchConfig, CheckRejectsColumnPassesThatCannotRun) {
  NormProblem p = problem(4096, DType::BF16);
  p.has_bias = true;
  p = codegen::resolve_problem(p);
  const LaunchConfig c = codegen::column_pass_config(p, 256, 32);
  EXPECT_EQ(c.vec, 8);
  EXPECT_NO_THROW(codegen::check_launch_config(p, c));
  for (void (*bad)(LaunchConfig&) : {+[](LaunchConfig& b) { b.column_pass = 24; },
                                     +[](LaunchConfig& b) { b.column_pass = 512; },
                                     +[](LaunchConfig& b) { b.column_pass = -1; },
                                     +[](LaunchConfig& b) { b.row_in_registers = true; },
                                     +[](LaunchConfig& b) { b.shared_sums = true; },
                                     +[](LaunchConfig& b) { b.prefetch = true; }}) {
    LaunchConfig b = c;
    bad(b);
    EXPECT_THROW(codegen::check_launch_config(p, b), std::invalid_argument) << codegen::describe(b);
  }
  NormProblem gated = p;
  gated.kind = NormKind::RMSNorm;
  gated.has_bias = false;
  gated.gate = Gate::AfterNorm;
  EXPECT_THROW(codegen::check_launch_config(codegen::resolve_problem(gated), c), std::invalid_argument)
      << "no fused options in the column pass";
}

// Rows copied ahead into shared memory: one aligned row a block (or cluster) held in registers,
// N a multiple of the 16-byte slots, no fused option; the stages counted in the shared memory.
TEST(LaunchConfig, CheckRejectsRowsCopiedAheadThatCannotRun) {
  NormProblem p = problem(16384, DType::BF16);
  p.has_bias = true;
  p = codegen::resolve_problem(p);
  LaunchConfig c =
      codegen::parse_described_config("threads=512 threads_per_row=512 vec=8 registers cluster=2 shared_sums");
  const size_t without = codegen::dynamic_shared_bytes(p, c);
  c.shared_prefetch = 1;
  EXPECT_NO_THROW(codegen::check_launch_config(p, c));
  EXPECT_EQ(codegen::dynamic_shared_bytes(p, c), without + 2 * 8192 * 2)
      << "a stage: the block's 8192 columns of x and dy";
  c.shared_prefetch = 2;
  EXPECT_EQ(codegen::dynamic_shared_bytes(p, c), without + 2 * 2 * 8192 * 2);
  EXPECT_EQ(codegen::parse_described_config(codegen::describe(c)), c);
  for (void (*bad)(LaunchConfig&) : {+[](LaunchConfig& b) { b.shared_prefetch = codegen::kMaxSharedPrefetch + 1; },
                                     +[](LaunchConfig& b) { b.shared_prefetch = -1; },
                                     +[](LaunchConfig& b) { b.prefetch = true; },
                                     +[](LaunchConfig& b) { b.staged = true; },
                                     +[](LaunchConfig& b) { b.vec = 4; },  // 8-byte slots
                                     +[](LaunchConfig& b) { b.cluster = 1, b.threads_per_row = 32; },
                                     +[](LaunchConfig& b) { b.cluster = 1, b.merge = 2; }}) {
    LaunchConfig b = c;
    bad(b);
    EXPECT_THROW(codegen::check_launch_config(p, b), std::invalid_argument) << codegen::describe(b);
  }
  NormProblem unaligned = p;
  unaligned.alignment = 8;
  EXPECT_THROW(codegen::check_launch_config(unaligned, c), std::invalid_argument) << "rows aligned to 8 bytes";
  NormProblem odd = p;
  odd.n = 16380;  // rows of 16-byte pieces but the last slot part-filled
  EXPECT_THROW(codegen::check_launch_config(odd, c), std::invalid_argument) << "N not a multiple of vec";
  NormProblem residual = p;
  residual.residual = true;
  EXPECT_THROW(codegen::check_launch_config(codegen::resolve_problem(residual), c), std::invalid_argument)
      << "no fused options";
}

// Paired rows: one row a block (or cluster) held in registers, nothing else ahead of it, no fused
// option; registers and compile cost counted twice, as for prefetch; described and parsed.
TEST(LaunchConfig, CheckRejectsPairedRowsThatCannotRun) {
  NormProblem p = problem(16384, DType::BF16);
  p.has_bias = true;
  p = codegen::resolve_problem(p);
  LaunchConfig c = codegen::parse_described_config(
      "threads=512 threads_per_row=512 vec=8 registers cluster=2 paired_rows shared_sums shared_weights");
  EXPECT_TRUE(c.paired_rows);
  EXPECT_NO_THROW(codegen::check_launch_config(p, c));
  EXPECT_EQ(codegen::parse_described_config(codegen::describe(c)), c);
  LaunchConfig one = c;
  one.paired_rows = false;
  EXPECT_FALSE(one == c);
  EXPECT_EQ(codegen::dynamic_shared_bytes(p, c), codegen::dynamic_shared_bytes(p, one)) << "the same sums and γ";
  LaunchConfig prefetching = one;
  prefetching.prefetch = true;
  EXPECT_EQ(codegen::estimated_registers(p, c), codegen::estimated_registers(p, prefetching)) << "two rows held";
  EXPECT_GT(codegen::estimated_registers(p, c), codegen::estimated_registers(p, one));
  for (void (*bad)(LaunchConfig&) : {+[](LaunchConfig& b) { b.prefetch = true; },
                                     +[](LaunchConfig& b) { b.shared_prefetch = 1; },
                                     +[](LaunchConfig& b) { b.staged = true; },
                                     +[](LaunchConfig& b) { b.row_in_registers = false, b.cluster = 1; },
                                     +[](LaunchConfig& b) { b.cluster = 1, b.threads_per_row = 32; },
                                     +[](LaunchConfig& b) { b.cluster = 1, b.merge = 2; }}) {
    LaunchConfig b = c;
    bad(b);
    EXPECT_THROW(codegen::check_launch_config(p, b), std::invalid_argument) << codegen::describe(b);
  }
  NormProblem residual = p;
  residual.residual = true;
  EXPECT_THROW(codegen::check_launch_config(codegen::resolve_problem(residual), c), std::invalid_argument)
      << "no fused options";
  // Phased rows may pair theirs (their row group's rows share a phase two at a time as one).
  NormProblem odd = problem(5003, DType::BF16, 2);
  odd.has_bias = true;
  odd.rows_in_phase = true;
  odd = codegen::resolve_problem(odd);
  LaunchConfig phased = codegen::parse_described_config(
      "threads=320 threads_per_row=320 vec=8 registers paired_rows shared_sums shared_weights phased");
  EXPECT_NO_THROW(codegen::check_launch_config(odd, phased));
}

// Early weights: x̂ recomputed from y, rows held in registers as fp32 (not streamed, staged or
// packed), any block shape; described and parsed back.
TEST(LaunchConfig, CheckRejectsEarlyWeightsThatCannotRun) {
  auto recompute = [](NormProblem& p) { p.recompute_from_output = true; };
  const NormProblem p = with_option(3001, DType::BF16, NormKind::LayerNorm, recompute);
  const LaunchConfig c = codegen::parse_described_config("threads=384 threads_per_row=384 vec=1 registers early_weights");
  EXPECT_TRUE(c.early_weights);
  EXPECT_NO_THROW(codegen::check_launch_config(p, c));
  EXPECT_EQ(codegen::parse_described_config(codegen::describe(c)), c);
  LaunchConfig late = c;
  late.early_weights = false;
  EXPECT_FALSE(late == c);
  EXPECT_NO_THROW(codegen::check_launch_config(with_option(33, DType::F32, NormKind::RMSNorm, recompute),
                                               codegen::parse_described_config(
                                                   "threads=128 threads_per_row=16 vec=1 registers early_weights")))
      << "several rows a block";
  EXPECT_NO_THROW(codegen::check_launch_config(
      with_option(3001, DType::F32, NormKind::LayerNorm, recompute),
      codegen::parse_described_config("threads=384 threads_per_row=384 vec=1 registers min_blocks=2 shared_sums early_weights")))
      << "fp32 rows with shared sums are held as fp32";
  for (const char* bad : {"threads=384 threads_per_row=384 vec=1 registers min_blocks=2 shared_sums early_weights",
                          "threads=384 threads_per_row=384 vec=8 registers staged early_weights",
                          "threads=512 threads_per_row=512 vec=1 streamed early_weights"})
    EXPECT_THROW(codegen::check_launch_config(p, codegen::parse_described_config(bad)), std::invalid_argument) << bad;
  EXPECT_THROW(codegen::check_launch_config(with_option(3001, DType::BF16, NormKind::LayerNorm, no_option), c),
               std::invalid_argument)
      << "no recompute";
}

// The memory-rich rule for 16-bit rows of 12289-16384 (mid_rows_copied_ahead): a cluster of two
// blocks copying a row ahead, two an SM (12289-13312, LayerNorm to 13824, RMSNorm 14337-14848),
// one block copying ahead (13825-14336), LayerNorm's 15361-16384 paired; from 1024 rows; not on
// an H100, fp32 or fused rows, rows aligned to less, phased rows' twins or few rows.
TEST(LaunchConfig, MidSixteenBitRowsCopyAheadOnMemoryRichDevices) {
  auto norm = [](int64_t n, NormKind kind, DType x = DType::BF16, int alignment = 16) {
    NormProblem p = problem(n, x, alignment);
    p.kind = kind;
    p.weight_dtype = DType::F32;
    p.has_bias = kind == NormKind::LayerNorm;
    return codegen::resolve_problem(p);
  };
  auto at = [&](int64_t n, NormKind kind, DType x = DType::BF16, int64_t m = 4096, double rate = 18.4) {
    return choose_launch_config(norm(n, kind, x), 90, 132, m, rate);
  };
  struct Expected {
    int64_t n;
    NormKind kind;
    int cluster;  // 0: the rule leaves the row alone
    bool paired;
  };
  const Expected expected[] = {
      {12288, NormKind::LayerNorm, 0, false}, {12296, NormKind::LayerNorm, 2, false},
      {13312, NormKind::LayerNorm, 2, false}, {13312, NormKind::RMSNorm, 2, false},
      {13824, NormKind::LayerNorm, 2, false}, {13824, NormKind::RMSNorm, 0, false},
      {14080, NormKind::LayerNorm, 1, false}, {14336, NormKind::RMSNorm, 1, false},
      {14592, NormKind::LayerNorm, 0, false}, {14592, NormKind::RMSNorm, 2, false},
      {14848, NormKind::RMSNorm, 2, false},   {15360, NormKind::RMSNorm, 0, false},
      {15360, NormKind::LayerNorm, 0, false}, {15368, NormKind::LayerNorm, 2, true},
      {16384, NormKind::LayerNorm, 2, true},  {16384, NormKind::RMSNorm, 0, false},
  };
  for (const Expected& e : expected)
    for (DType x : {DType::BF16, DType::F16}) {
      const LaunchConfig c = at(e.n, e.kind, x);
      const std::string what = std::to_string(e.n) + " " + codegen::describe(c);
      EXPECT_NO_THROW(codegen::check_launch_config(norm(e.n, e.kind, x), c)) << what;
      EXPECT_EQ(codegen::prune_reason(norm(e.n, e.kind, x), c, 90), "") << what;
      if (e.cluster == 0) {
        EXPECT_FALSE(c.shared_prefetch > 0 || c.paired_rows) << what;
        continue;
      }
      EXPECT_EQ(c.cluster, e.cluster) << what;
      EXPECT_EQ(c.paired_rows, e.paired) << what;
      EXPECT_EQ(c.shared_prefetch, e.paired ? 0 : 1) << what;
      EXPECT_EQ(c.min_blocks_per_sm, e.cluster == 2 && !e.paired ? 2 : 1) << what;
      EXPECT_TRUE(c.shared_sums && c.shared_weights && c.vec == 8) << what;
      EXPECT_EQ(codegen::elements_per_thread(norm(e.n, e.kind, x), c), 16) << what;
      // Where the rule does not reach: the H100, few rows, fp32 rows, a fused option.
      EXPECT_FALSE(at(e.n, e.kind, x, 4096, 12.8) == c) << what << ": an H100";
      EXPECT_FALSE(at(e.n, e.kind, x, 512) == c) << what << ": 512 rows";
      const LaunchConfig fp32 = at(e.n, e.kind, DType::F32);
      EXPECT_FALSE(fp32.shared_prefetch > 0 || fp32.paired_rows) << what << ": fp32 rows";
      NormProblem residual = norm(e.n, e.kind, x);
      residual.residual = true;
      const LaunchConfig fused = choose_launch_config(codegen::resolve_problem(residual), 90, 132, 4096, 18.4);
      EXPECT_FALSE(fused.shared_prefetch > 0 || fused.paired_rows) << what << ": the residual";
    }
  // Rows aligned to less, and odd rows in phase (their twin's config from before the rule).
  for (const int64_t n : {12289, 13001, 14001, 16383}) {
    NormProblem odd = norm(n, NormKind::LayerNorm, DType::BF16, 2);
    odd.rows_in_phase = true;
    const LaunchConfig c = choose_launch_config(odd, 90, 132, 4096, 18.4);
    EXPECT_FALSE(c.shared_prefetch > 0 || c.paired_rows) << n << " " << codegen::describe(c);
    EXPECT_NO_THROW(codegen::check_launch_config(odd, c)) << n;
    odd.rows_in_phase = false;
    EXPECT_NO_THROW(codegen::check_launch_config(odd, choose_launch_config(odd, 90, 132, 4096, 18.4))) << n;
  }
}

// Long 16-bit rows of one sum copy the next row ahead at 65537-262144 columns from 128 rows;
// not LayerNorm's two sums, fp32 rows, rows aligned to less, fused options or few rows.
TEST(LaunchConfig, LongSixteenBitRowsOfOneSumCopyTheNextRowAhead) {
  auto rms = [](int64_t n, DType x = DType::BF16) {
    NormProblem p = problem(n, x);
    p.kind = NormKind::RMSNorm;
    p.weight_dtype = DType::F32;
    return codegen::resolve_problem(p);
  };
  for (const int64_t n : {65544, 98304, 131072, 196608, 262144})
    for (const DType x : {DType::BF16, DType::F16}) {
      const LaunchConfig c = choose_launch_config(rms(n, x), 90, 132, 256);
      EXPECT_EQ(c.shared_prefetch, 1) << n;
      EXPECT_EQ(c.cluster, n > 131072 ? 16 : 8) << n;
      EXPECT_EQ(c.min_blocks_per_sm, 1) << n;
      EXPECT_TRUE(c.shared_sums && c.shared_weights && c.vec == 8) << n;
      EXPECT_EQ(codegen::elements_per_thread(rms(n, x), c), 16) << n;
      EXPECT_NO_THROW(codegen::check_launch_config(rms(n, x), c)) << n;
    }
  EXPECT_EQ(choose_launch_config(rms(65536), 90, 132, 1024).shared_prefetch, 0) << "two blocks an SM win at 65536";
  EXPECT_EQ(choose_launch_config(rms(262144), 90, 132, 64).shared_prefetch, 0) << "64 rows: few to copy ahead";
  EXPECT_EQ(choose_launch_config(rms(262144, DType::F32), 90, 132, 256).shared_prefetch, 0) << "fp32 rows";
  EXPECT_EQ(choose_launch_config(rms(262144), 80, 108, 256).shared_prefetch, 0) << "timed on sm_90 only";
  NormProblem ln = problem(262144, DType::BF16);
  ln.has_bias = true;
  EXPECT_EQ(choose_launch_config(codegen::resolve_problem(ln), 90, 132, 256).shared_prefetch, 0) << "two sums";
  NormProblem residual = rms(131072);
  residual.residual = true;
  EXPECT_EQ(choose_launch_config(codegen::resolve_problem(residual), 90, 132, 512).shared_prefetch, 0);
  NormProblem unaligned = rms(131068);
  unaligned.alignment = 8;
  EXPECT_EQ(choose_launch_config(codegen::resolve_problem(unaligned), 90, 132, 512).shared_prefetch, 0);
}

// 16-bit RMSNorm rows aligned to less than 16 bytes, staged in one block: shared sums, three
// blocks an SM (5003: 207 us against 215; bench/results/2026-11-24-h100-2e41f5d-tune-gaps/).
// Not LayerNorm (its best keeps the sums in registers), not at few rows.
TEST(LaunchConfig, OddRmsRowsStagedInOneBlockShareTheirSums) {
  auto norm = [](NormKind kind) {
    NormProblem p = problem(5003, DType::BF16, 2);
    p.kind = kind;
    p.weight_dtype = DType::F32;
    p.has_bias = kind == NormKind::LayerNorm;
    return codegen::resolve_problem(p);
  };
  EXPECT_EQ(codegen::describe(choose_launch_config(norm(NormKind::RMSNorm), 90, 132)),
            "threads=320 threads_per_row=320 vec=8 registers staged min_blocks=3 shared_sums");
  EXPECT_FALSE(choose_launch_config(norm(NormKind::LayerNorm), 90, 132).shared_sums);
  EXPECT_FALSE(choose_launch_config(norm(NormKind::RMSNorm), 90, 132, 199).shared_sums) << "few rows";
}

// γ in shared memory (LaunchConfig::shared_weights, with_shared_weights): rows in registers
// with shared sums, a slot's γ of more than 16 bytes with one block an SM or a cluster, or of
// 16 bytes in a cluster (not 16-bit rows in 4-wide slots), none of the options measured slower
// with it (the gate, the recompute), and where it fits (parallel norms' sums may not); the
// heuristic sets it, dynamic shared memory counts it, check_launch_config guards it.
TEST(LaunchConfig, SharedWeightsWhereOneBlockOrAClusterHoldsTheColumns) {
  const auto plain = [](int64_t n, DType weight = DType::F32, DType x = DType::BF16) {
    NormProblem p = with_option(n, x, NormKind::LayerNorm, no_option);
    p.weight_dtype = weight;
    return codegen::resolve_problem(p);
  };
  const auto floats = [](const NormProblem& p, const LaunchConfig& c) {
    return codegen::elements_per_thread(p, c) * c.threads_per_row * int64_t{sizeof(float)};
  };
  for (int64_t n : {10240, 12288, 14336, 65536, 262144}) {
    const NormProblem p = plain(n);
    const LaunchConfig c = choose_launch_config(p, 90, 132);
    ASSERT_TRUE(c.shared_sums && (c.min_blocks_per_sm == 1 || c.cluster > 1)) << n << ": " << codegen::describe(c);
    EXPECT_TRUE(c.shared_weights) << n;
    EXPECT_EQ(codegen::dynamic_shared_bytes(p, c), static_cast<size_t>(3 * floats(p, c))) << n << ": dγ, dβ and γ";
    LaunchConfig without = c;
    without.shared_weights = false;
    EXPECT_EQ(codegen::with_shared_weights(p, without, 90), c) << n;
  }
  // Several blocks an SM of the same columns (L1 holds one γ for them all).
  for (int64_t n : {5120, 8192}) {
    const NormProblem p = plain(n);
    const LaunchConfig c = choose_launch_config(p, 90, 132);
    ASSERT_TRUE(c.shared_sums && c.min_blocks_per_sm > 1 && c.cluster == 1) << n << ": " << codegen::describe(c);
    EXPECT_FALSE(c.shared_weights) << n;
    EXPECT_EQ(codegen::dynamic_shared_bytes(p, c), static_cast<size_t>(2 * floats(p, c))) << n;
  }
  // A slot's γ of 16 bytes (bf16 γ; fp32 rows, 4 a slot of fp32 γ): clusters, and 16-bit γ of
  // 16-bit rows in one block an SM (-2026-11-29-h200-719d048-final/ab-sw.txt).
  const NormProblem same = plain(12288, DType::BF16);
  const LaunchConfig same_block = choose_launch_config(same, 90, 132);
  EXPECT_TRUE(same_block.cluster == 1 && same_block.min_blocks_per_sm == 1 && same_block.shared_weights)
      << codegen::describe(same_block);
  const LaunchConfig fp32_rows = choose_launch_config(plain(8192, DType::F32, DType::F32), 90, 132);
  EXPECT_TRUE(fp32_rows.cluster == 1 && !fp32_rows.shared_weights) << codegen::describe(fp32_rows);
  for (int64_t n : {16384, 65536}) {
    const LaunchConfig c = choose_launch_config(plain(n, DType::BF16), 90, 132);
    EXPECT_EQ(c.shared_weights, c.cluster > 1) << n << ": " << codegen::describe(c);
  }
  const LaunchConfig fp32_cluster = choose_launch_config(plain(131072, DType::F32, DType::F32), 90, 132);
  EXPECT_TRUE(fp32_cluster.cluster > 1 && fp32_cluster.shared_weights) << codegen::describe(fp32_cluster);
  // Not 16-bit rows in 4-wide slots (LN 16384: chosen where γ's loads fill whole sectors), nor
  // γ of 8 bytes a slot.
  const LaunchConfig quads = choose_launch_config(plain(16384), 90, 132);
  ASSERT_TRUE(quads.vec == 4 && quads.shared_sums) << codegen::describe(quads);
  EXPECT_FALSE(quads.shared_weights);
  LaunchConfig halves = choose_launch_config(same, 90, 132);
  halves.vec = 4;
  halves.shared_weights = false;
  EXPECT_FALSE(codegen::with_shared_weights(same, halves, 90).shared_weights);
  // The options that measured slower with it.
  for (auto option : {+[](NormProblem& q) { q.recompute_from_output = true; }, +[](NormProblem& q) { q.gate = Gate::AfterNorm; }}) {
    NormProblem p = with_option(12288, DType::BF16, NormKind::RMSNorm, option);
    EXPECT_FALSE(choose_launch_config(p, 90, 132).shared_weights) << codegen::describe(p);
  }
  // Parallel norms where their sums leave room: RMSNorm's two at 12288, not LayerNorm's four
  // (192 KB of sums in one 768-thread block).
  const auto parallel = [](NormProblem& q) { q.parallel = true; };
  EXPECT_TRUE(choose_launch_config(with_option(12288, DType::BF16, NormKind::RMSNorm, parallel), 90, 132).shared_weights);
  const NormProblem ln_parallel = with_option(12288, DType::BF16, NormKind::LayerNorm, parallel);
  const LaunchConfig four_sums = choose_launch_config(ln_parallel, 90, 132);
  EXPECT_FALSE(four_sums.shared_weights) << codegen::describe(four_sums);
  EXPECT_LE(codegen::dynamic_shared_bytes(ln_parallel, four_sums), codegen::max_stage_bytes(90));
  NormProblem residual = plain(12288);
  residual.residual = true;
  EXPECT_TRUE(choose_launch_config(residual, 90, 132).shared_weights);
  // Where the SM's shared memory would not hold it (LN fp32 16384 in one block of sums on
  // sm_80: 128 KB of sums, 64 KB more of γ against 163 KB), or no γ: not set.
  LaunchConfig a100 = choose_launch_config(plain(16384, DType::F32, DType::F32), 80, 108);
  a100.shared_weights = false;
  if (a100.shared_sums) EXPECT_FALSE(codegen::with_shared_weights(plain(16384, DType::F32, DType::F32), a100, 80).shared_weights);
  // check_launch_config: only with shared sums and γ.
  LaunchConfig bad = choose_launch_config(plain(8192), 90, 132);
  bad.shared_sums = false;
  bad.shared_weights = true;
  EXPECT_THROW(codegen::check_launch_config(plain(8192), bad), std::invalid_argument);
  NormProblem no_weight = plain(12288);
  no_weight.has_weight = false;
  LaunchConfig c = choose_launch_config(plain(12288), 90, 132);
  EXPECT_THROW(codegen::check_launch_config(no_weight, c), std::invalid_argument);
  EXPECT_NE(codegen::describe(c).find(" shared_weights"), std::string::npos) << codegen::describe(c);
}

// Grid clusters (rows no cluster holds) hold their slice's γ beside the stages the config has,
// where it fits: option-free rows aligned to 16 bytes (contiguous staged slots), with γ. Not odd
// 16-bit rows (interleaved slots read γ element by element), not A100's smaller shared memory
// at 5 stages, not the fused options (not timed there); check_launch_config guards it.
TEST(LaunchConfig, GridClustersHoldTheirSliceOfGammaBesideTheStages) {
  for (const DType x : {DType::BF16, DType::F16, DType::F32})
    for (const NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm}) {
      const NormProblem p = with_option(1048576, x, kind, no_option);
      const LaunchConfig c = choose_launch_config(p, 90, 132);
      ASSERT_TRUE(c.grid) << codegen::describe(p) << ": " << codegen::describe(c);
      EXPECT_TRUE(c.shared_weights) << codegen::describe(p) << ": " << codegen::describe(c);
      LaunchConfig without = c;
      without.shared_weights = false;
      EXPECT_EQ(without.stages, c.stages) << "γ takes room beside the stages, not from them";
      EXPECT_EQ(codegen::dynamic_shared_bytes(p, c),
                codegen::dynamic_shared_bytes(p, without) +
                    static_cast<size_t>(codegen::elements_per_thread(p, c) * c.threads_per_row * int64_t{sizeof(float)}));
      EXPECT_LE(codegen::dynamic_shared_bytes(p, c), codegen::max_stage_bytes(90));
      EXPECT_NO_THROW(codegen::check_launch_config(p, c));
    }
  NormProblem odd = with_option(1048577, DType::BF16, NormKind::LayerNorm, no_option);
  odd.alignment = 2;
  odd = codegen::resolve_problem(odd);
  const LaunchConfig interleaved = choose_launch_config(odd, 90, 132);
  ASSERT_TRUE(interleaved.grid) << codegen::describe(interleaved);
  EXPECT_FALSE(interleaved.shared_weights);
  LaunchConfig forced = interleaved;
  forced.shared_weights = true;
  EXPECT_THROW(codegen::check_launch_config(odd, forced), std::invalid_argument);
  const NormProblem plain = with_option(1048576, DType::BF16, NormKind::LayerNorm, no_option);
  const LaunchConfig a100 = choose_launch_config(plain, 80, 108);
  ASSERT_TRUE(a100.grid) << codegen::describe(a100);
  LaunchConfig a100_held = a100;
  a100_held.shared_weights = true;
  EXPECT_GT(codegen::dynamic_shared_bytes(plain, a100_held), codegen::max_stage_bytes(80)) << "its stages fill A100's 163 KB";
  EXPECT_FALSE(a100.shared_weights);
  const NormProblem residual = with_option(1048576, DType::BF16, NormKind::LayerNorm, [](NormProblem& q) { q.residual = true; });
  EXPECT_FALSE(choose_launch_config(residual, 90, 132).shared_weights);
  NormProblem no_weight = with_option(1048576, DType::BF16, NormKind::RMSNorm, no_option);
  no_weight.has_weight = false;
  no_weight = codegen::resolve_problem(no_weight);
  EXPECT_FALSE(choose_launch_config(no_weight, 90, 132).shared_weights);
}


// Peak bandwidth over SMs x SM clock: an H100 SXM (HBM3 at 2619 MHz on 5120 bits, 132 SMs at
// 1.98 GHz) and an H200 (HBM3e at 3201 MHz on 6144 bits) fall either side of the line.
TEST(LaunchConfig, MemoryBytesPerSmCycleTellsAnH200FromAnH100) {
  const double h100 = codegen::memory_bytes_per_sm_cycle(2619000, 5120, 132, 1980000);
  const double h200 = codegen::memory_bytes_per_sm_cycle(3201000, 6144, 132, 1980000);
  EXPECT_NEAR(h100, 12.8, 0.1);
  EXPECT_NEAR(h200, 18.8, 0.1);
  EXPECT_LT(h100, codegen::kMemoryRichBytesPerSmCycle);
  EXPECT_GE(h200, codegen::kMemoryRichBytesPerSmCycle);
  EXPECT_EQ(codegen::memory_bytes_per_sm_cycle(0, 6144, 132, 1980000), 0);  // a driver that reports no memory clock
  EXPECT_EQ(codegen::memory_bytes_per_sm_cycle(3201000, 6144, 0, 1980000), 0);
  EXPECT_EQ(codegen::memory_bytes_per_sm_cycle(3201000, 6144, 132, 0), 0);
}

// The memory-rich rules: exhaustive tuning on the H200 (bench/results/2026-11-28-h200-0299eca-tune/),
// narrowed by bench against the H100's rules (-5cbc10c-memory-rich/).
TEST(LaunchConfig, MemoryRichDevicesTakeTheRulesTunedOnAnH200) {
  auto at = [](int64_t n, NormKind kind, double rate, DType x = DType::BF16, void (*option)(NormProblem&) = no_option) {
    return choose_launch_config(with_option(n, x, kind, option), 90, 132, 67108864 / n, rate);
  };
  const std::vector<std::pair<int64_t, std::string>> tuned = {
      {2048, "threads=128 threads_per_row=128 vec=8 registers cluster=2 prefetch min_blocks=8 shared_sums shared_weights"},
      {4096, "threads=256 threads_per_row=256 vec=8 registers cluster=2 prefetch min_blocks=4 shared_sums shared_weights"},
      {5120, "threads=320 threads_per_row=320 vec=8 registers cluster=2 prefetch min_blocks=3 shared_sums shared_weights"},
      {7168, "threads=448 threads_per_row=448 vec=8 registers cluster=2 prefetch min_blocks=2 shared_sums shared_weights"},
      {8192, "threads=512 threads_per_row=512 vec=4 registers min_blocks=2 shared_sums"},
      {12288, "threads=768 threads_per_row=768 vec=8 registers prefetch shared_sums shared_weights"},
      // 14336 copies its next row ahead in one block, LayerNorm's 16384 pairs its rows
      // (mid_rows_copied_ahead; session 47, below).
      {14336, "threads=896 threads_per_row=896 vec=8 registers shared_prefetch=1 shared_sums shared_weights"},
      {16384, "threads=512 threads_per_row=512 vec=8 registers cluster=2 min_blocks=2 shared_sums shared_weights"},
      {32768, "threads=512 threads_per_row=512 vec=8 registers cluster=4 min_blocks=2 shared_sums shared_weights"},
      {65536, "threads=512 threads_per_row=512 vec=8 registers cluster=8 min_blocks=2 shared_sums shared_weights"},
  };
  // LayerNorm's rows retuned (session 37, -sweep-retune/, kept where they won in bench,
  // -layernorm-prefetch-ab/): one block a row prefetching, its sums in registers.
  const std::map<int64_t, std::string> layer_norm_retuned = {
      {4096, "threads=512 threads_per_row=512 vec=8 registers prefetch min_blocks=2"},
      {7168, "threads=896 threads_per_row=896 vec=8 registers prefetch"},
      {8192, "threads=512 threads_per_row=512 vec=8 registers prefetch"},
      {16384, "threads=512 threads_per_row=512 vec=8 registers cluster=2 paired_rows shared_sums shared_weights"},
  };
  // LayerNorm's rows of 1536-7168 but the prefetching blocks above pair their rows in the
  // cluster of two, not prefetching (session 53, 2026-11-30-h200-pairs-odd-layernorm/).
  const std::map<int64_t, std::string> layer_norm_paired = {
      {2048, "threads=128 threads_per_row=128 vec=8 registers cluster=2 paired_rows min_blocks=8 shared_sums shared_weights"},
      {4096, "threads=256 threads_per_row=256 vec=8 registers cluster=2 paired_rows min_blocks=4 shared_sums shared_weights"},
      {5120, "threads=320 threads_per_row=320 vec=8 registers cluster=2 paired_rows min_blocks=3 shared_sums shared_weights"},
  };
  for (DType x : {DType::BF16, DType::F16})
    for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm})
      for (const auto& [n, tuned_config] : tuned) {
        const bool retuned = kind == NormKind::LayerNorm && layer_norm_retuned.count(n) &&
                             !(n == 4096 && x == DType::F16);
        const bool paired = kind == NormKind::LayerNorm && !retuned && layer_norm_paired.count(n);
        const std::string& config = retuned ? layer_norm_retuned.at(n) : paired ? layer_norm_paired.at(n) : tuned_config;
        EXPECT_EQ(codegen::describe(at(n, kind, 18.8, x)), config) << n;
        EXPECT_FALSE(at(n, kind, 18.8, x) == at(n, kind, 12.8, x)) << n;
        EXPECT_EQ(at(n, kind, 12.8, x), at(n, kind, 0, x)) << n << ": an H100, or a device that reports no rate";
      }
  // Where the tuned rules lost in bench, the H100's stand; fp32 rows and RMSNorm's 1024 keep them
  // too. LayerNorm's 1024: bf16's prefetching block, fp16's one block of paired rows (session 53:
  // the H100's warp a row lost to it, 1.10x).
  EXPECT_EQ(codegen::describe(at(1024, NormKind::LayerNorm, 18.8)),
            "threads=128 threads_per_row=128 vec=8 registers prefetch min_blocks=2");
  EXPECT_EQ(at(1024, NormKind::RMSNorm, 18.8), at(1024, NormKind::RMSNorm, 0));
  EXPECT_EQ(codegen::describe(at(1024, NormKind::LayerNorm, 18.8, DType::F16)),
            "threads=128 threads_per_row=128 vec=8 registers paired_rows min_blocks=8 shared_sums");
  for (int64_t n : {1536, 2560, 3072, 7680})
    EXPECT_FALSE(at(n, NormKind::LayerNorm, 18.8).prefetch && at(n, NormKind::LayerNorm, 18.8).cluster == 1)
        << n << ": where the prefetching block lost, the cluster of two";
  // 1536-7168 in 512-column steps: LayerNorm's pair their rows in the cluster of two but where
  // the prefetching block stayed (3584, 7168; bf16 4096 and 6656, where pairs lost: fp16 6656
  // pairs), and only with 16-bit dx; RMSNorm's keep the cluster of two prefetching.
  auto fp32_dx = [](NormProblem& p) { p.dx_dtype = DType::F32; };
  for (DType x : {DType::BF16, DType::F16})
    for (int64_t n = 1536; n <= 7168; n += 512) {
      const bool block = n == 3584 || n == 7168 || (x == DType::BF16 && (n == 4096 || n == 6656));
      const LaunchConfig c = at(n, NormKind::LayerNorm, 18.8, x);
      EXPECT_EQ(c.paired_rows, !block) << n;
      EXPECT_EQ(c.prefetch, block) << n;
      EXPECT_EQ(c.cluster, block ? 1 : 2) << n;
      EXPECT_EQ(c.shared_sums, !block) << n;
      const LaunchConfig rms = at(n, NormKind::RMSNorm, 18.8, x);
      EXPECT_TRUE(rms.cluster == 2 && rms.prefetch && rms.shared_sums && !rms.paired_rows) << n << " " << codegen::describe(rms);
      if (block) continue;
      const LaunchConfig wide_dx = at(n, NormKind::LayerNorm, 18.8, x, fp32_dx);
      EXPECT_TRUE(wide_dx.cluster == 2 && wide_dx.prefetch && !wide_dx.paired_rows) << n << ": fp32 dx";
    }
  for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm}) {
    for (int64_t n : {131072, 262144})
      EXPECT_EQ(at(n, kind, 18.8), at(n, kind, 0)) << n;
    for (int64_t n : {2048, 4096, 7168, 8192, 12288, 16384, 32768, 57344})
      EXPECT_EQ(at(n, kind, 18.8, DType::F32), at(n, kind, 0, DType::F32)) << n;
    // fp32 rows of 57345-65536: blocks of 16 elements in a cluster of 8, not 8 in a cluster of 16.
    for (int64_t n : {61440, 65536}) {
      EXPECT_EQ(at(n, kind, 18.8, DType::F32).cluster, 8) << n;
      EXPECT_EQ(at(n, kind, 0, DType::F32).cluster, 16) << n;
      EXPECT_EQ(codegen::elements_per_thread(problem(n, DType::F32), at(n, kind, 18.8, DType::F32)), 16) << n;
    }
    // fp32 rows but at two ranges, where clusters of two blocks tuned faster (-41c3636-final/).
    EXPECT_EQ(codegen::describe(at(5120, kind, 18.8, DType::F32)),
              "threads=320 threads_per_row=320 vec=4 registers cluster=2 min_blocks=3 shared_sums shared_weights");
    EXPECT_EQ(codegen::describe(at(14336, kind, 18.8, DType::F32)),
              "threads=896 threads_per_row=896 vec=4 registers cluster=2 prefetch shared_sums shared_weights");
  }
  // Fused options keep the H100's rules but for the clusters of eight (the elementwise options
  // take the option-free row's config there, as on an H100), and the residual alone on 16-bit
  // rows, which takes the prefetching rules (-9756722-held-weights-fused/tune-summary.txt).
  auto residual = [](NormProblem& p) { p.residual = true; };
  auto residual_rowscale = [](NormProblem& p) { p.residual = p.rowscale = true; };
  for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm}) {
    // (LayerNorm's residual keeps the clusters of two the option-free rows had before session 37.)
    for (int64_t n : {2048, 4096, 7168, 12288})
      EXPECT_EQ(at(n, kind, 18.8, DType::BF16, residual), at(n, NormKind::RMSNorm, 18.8)) << n << ": prefetching";
    for (int64_t n : {8192, 14336, 16384})
      EXPECT_EQ(at(n, kind, 18.8, DType::BF16, residual), at(n, kind, 0, DType::BF16, residual)) << n << ": not prefetching";
    EXPECT_EQ(at(4096, kind, 18.8, DType::BF16, residual_rowscale), at(4096, kind, 0, DType::BF16, residual_rowscale));
    EXPECT_EQ(at(5120, kind, 18.8, DType::F32, residual), at(5120, kind, 0, DType::F32, residual)) << "fp32 rows";
  }
  EXPECT_EQ(at(32768, NormKind::LayerNorm, 18.8, DType::BF16, residual), at(32768, NormKind::LayerNorm, 18.8));
}


// The memory-rich rules of sessions 34 and 52 (bench/results/2026-11-29-h200-{a6d2427-rules,
// *-rules-2}/, 2026-11-30-h200-short-rows/): option-free 16-bit rows of 513-2047 not a multiple
// of 128 (a warp a row up to 1023, paired rows with shared sums beyond), and rows aligned to
// less staged in blocks of up to 800 threads.
TEST(LaunchConfig, MemoryRichShortRowsLeaveTheStagedBlocks) {
  auto at = [](int64_t n, NormKind kind, double rate, DType x = DType::BF16, void (*option)(NormProblem&) = no_option) {
    return choose_launch_config(with_option(n, x, kind, option), 90, 132, 67108864 / n, rate);
  };
  for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm})
    for (DType x : {DType::BF16, DType::F16}) {
      for (int64_t n : {520, 600, 712, 1000, 1016})
        EXPECT_EQ(codegen::describe(at(n, kind, 18.8, x)), "threads=128 threads_per_row=32 vec=4 registers") << n;
      for (int64_t n : {1032, 1400, 2040}) {
        const LaunchConfig c = at(n, kind, 18.8, x);
        EXPECT_TRUE(c.paired_rows && c.shared_sums && c.shared_weights && c.row_in_registers && !c.staged) << n;
        EXPECT_EQ(c.vec, 8) << n;
        const int64_t slots = n / 8;
        if (kind == NormKind::RMSNorm) {
          // The block of before: a slot a thread up to 128 threads, then two.
          EXPECT_EQ(c.cluster, 1) << n;
          EXPECT_EQ(c.threads, codegen::warp_threads(slots, slots <= 128 ? 1 : 2)) << n;
          EXPECT_EQ(c.min_blocks_per_sm, 1) << n;
        } else {
          // A slot a thread, one block up to 160 threads, then a cluster of two, 8 an SM.
          EXPECT_EQ(c.cluster, slots <= 160 ? 1 : 2) << n;
          EXPECT_EQ(c.threads, codegen::warp_threads(slots, c.cluster)) << n;
          EXPECT_EQ(c.min_blocks_per_sm, c.cluster == 1 ? 1 : 8) << n;
        }
      }
      for (int64_t n : {600, 1000, 1960}) {
        EXPECT_TRUE(at(n, kind, 0, x).staged) << n << ": the H100's rule";
        EXPECT_TRUE(at(n, kind, 18.8, x, [](NormProblem& p) { p.residual = true; }).staged) << n << ": fused";
      }
      // Warps fill their last pass: not this rule's. LayerNorm's pair by their own (session 53,
      // MemoryRichDevicesTakeTheRulesTunedOnAnH200) but bf16's 1024, a prefetching block.
      for (int64_t n : {1024, 1536})
        EXPECT_EQ(at(n, kind, 18.8, x).paired_rows, kind == NormKind::LayerNorm && !(n == 1024 && x == DType::BF16))
            << n << ": warps fill their last pass";
    }
  // LayerNorm's bf16 rows with 16-bit γ and β keep a row a turn up to 1664 (paired, 0.94-0.99x).
  auto sixteen_bit_weights = [](NormProblem& p) { p.weight_dtype = p.x_dtype; };
  for (int64_t n : {1032, 1400, 1640}) {
    const LaunchConfig c = at(n, NormKind::LayerNorm, 18.8, DType::BF16, sixteen_bit_weights);
    EXPECT_FALSE(c.paired_rows) << n;
    EXPECT_TRUE(c.shared_sums && c.cluster == 1 && c.min_blocks_per_sm > 1) << n << " " << codegen::describe(c);
    EXPECT_TRUE(at(n, NormKind::LayerNorm, 18.8, DType::F16, sixteen_bit_weights).paired_rows) << n << ": fp16 pairs";
    EXPECT_TRUE(at(n, NormKind::RMSNorm, 18.8, DType::BF16, sixteen_bit_weights).paired_rows) << n << ": RMSNorm pairs";
  }
  EXPECT_TRUE(at(1768, NormKind::LayerNorm, 18.8, DType::BF16, sixteen_bit_weights).paired_rows);
  // Rows aligned to 2 bytes (odd N), in phase or not.
  auto odd_rows = [](int64_t n, DType x, NormKind kind, bool in_phase) {
    NormProblem p = with_option(n, x, kind, no_option);
    p.alignment = 2;
    p.rows_in_phase = in_phase;
    return codegen::resolve_problem(p);
  };
  // Those of 513-768, and RMSNorm's to 1023: a warp a row of elements, 16 rows a block (in phase,
  // RMSNorm's of 960-1017 take their phased block). LayerNorm's beyond, to 1024: blocks of 64
  // threads of 16 elements, 10 an SM at 96 registers (session 53: 7 at 139 lost at 897-959, and
  // 8 at 128 to 10 at 801-1021); fp16's of 1025 in blocks of 96, 6 an SM.
  for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm})
    for (bool in_phase : {false, true})
      for (int64_t n : {513, 745, 767, 801, 959, 999, 1001, 1017, 1019, 1023, 1025}) {
        const NormProblem odd = odd_rows(n, DType::F16, kind, in_phase);
        const LaunchConfig c = choose_launch_config(odd, 90, 132, 67108864 / n, 18.8);
        const bool warp = kind == NormKind::LayerNorm ? n <= 768 : n <= 1023 && !(in_phase && n >= 960 && n <= 1017);
        EXPECT_EQ(codegen::describe(c) == "threads=512 threads_per_row=32 vec=1 registers", warp)
            << n << (in_phase ? " in phase: " : ": ") << codegen::describe(c);
        if (warp) {
          EXPECT_NE(choose_launch_config(odd, 90, 132, 200, 18.8).threads, 512) << n << ": few rows";
          EXPECT_NE(choose_launch_config(odd, 90, 132, 67108864 / n, 0).threads, 512) << n << ": the H100's rules";
        } else if (kind == NormKind::LayerNorm && n <= 1024) {
          EXPECT_EQ(codegen::describe(c), "threads=64 threads_per_row=64 vec=1 registers min_blocks=10")
              << n << (in_phase ? " in phase" : "");
        } else if (kind == NormKind::LayerNorm) {
          EXPECT_EQ(codegen::describe(c), "threads=96 threads_per_row=96 vec=1 registers min_blocks=6")
              << n << (in_phase ? " in phase" : "");
        }
      }
  // Rows in phase whose twin is a paired cluster (LayerNorm 1281-2047) are not phased: they
  // keep the rules of their alignment (phased pairs took 1.3-1.56x their time).
  for (int64_t n : {1281, 1537, 2001}) {
    const LaunchConfig c =
        choose_launch_config(odd_rows(n, DType::BF16, NormKind::LayerNorm, true), 90, 132, 67108864 / n, 18.8);
    EXPECT_FALSE(c.phased || c.paired_rows) << n << " " << codegen::describe(c);
  }

  // LayerNorm's rows of 12289-12800 aligned to 2 bytes: one staged block of 800 threads, not a
  // cluster of two (1.33-1.39x); 768 threads at most on an H100, and for aligned rows.
  auto odd = [](int64_t n, double rate) {
    NormProblem p = with_option(n, DType::BF16, NormKind::LayerNorm, no_option);
    p.alignment = 2;
    return choose_launch_config(codegen::resolve_problem(p), 90, 132, 67108864 / n, rate);
  };
  for (int64_t n : {12289, 12799}) {
    EXPECT_EQ(codegen::describe(odd(n, 18.8)), "threads=800 threads_per_row=800 vec=8 registers staged") << n;
    EXPECT_EQ(odd(n, 0).cluster, 2) << n;
  }
  EXPECT_EQ(odd(12801, 18.8).cluster, 2);
}

// 16-bit rows aligned to 2 or 4 bytes on memory-rich devices prefetch the next row, 8 slots a
// thread, two blocks an SM for rows of an element (bench/results/2026-11-29-h200-predicated-loads/):
// up to 2560 columns at 2-byte alignment (bf16 only, where 16 elements a thread would take blocks
// of 96 or 160 threads), 4096 at 4; not 8-byte aligned rows, nor on an H100. LayerNorm's bf16
// blocks of 128 threads of 16 elements (1537-2048) prefetch those, two an SM.
TEST(LaunchConfig, MemoryRichUnalignedShortRowsPrefetch) {
  auto at = [](int64_t n, int alignment, double rate, NormKind kind = NormKind::LayerNorm,
               void (*option)(NormProblem&) = no_option) {
    return rows_at_rate(n, DType::BF16, alignment, rate, kind, option);
  };
  for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm}) {
    EXPECT_EQ(codegen::describe(at(1505, 2, 18.8, kind)),
              "threads=192 threads_per_row=192 vec=1 registers prefetch min_blocks=2");
    EXPECT_EQ(codegen::describe(at(2505, 2, 18.8, kind)),
              "threads=320 threads_per_row=320 vec=1 registers prefetch min_blocks=2");
    EXPECT_EQ(codegen::describe(at(3002, 4, 18.8, kind)), "threads=192 threads_per_row=192 vec=2 registers prefetch");
    EXPECT_EQ(codegen::describe(at(4002, 4, 18.8, kind)), "threads=256 threads_per_row=256 vec=2 registers prefetch");
    EXPECT_FALSE(at(2561, 2, 18.8, kind).prefetch) << "two blocks of 352 threads spill";
    // LayerNorm's 16 a thread there: 3 blocks of 192 an SM at 96 registers (session 53).
    EXPECT_EQ(codegen::describe(at(2561, 2, 18.8, kind)), kind == NormKind::LayerNorm
                                                              ? "threads=192 threads_per_row=192 vec=1 registers min_blocks=3"
                                                              : "threads=192 threads_per_row=192 vec=1 registers");
    // Blocks of 64 or 128 threads of 16 elements fill an SM: not 8 a thread. LayerNorm's of 128
    // prefetch those 16, two an SM, and its blocks of 64 hold 10 an SM (session 53,
    // -pairs-odd-layernorm/); RMSNorm's 1001 takes a warp a row (MemoryRichShortRowsLeaveTheStagedBlocks).
    const bool ln = kind == NormKind::LayerNorm;
    EXPECT_EQ(codegen::describe(at(1001, 2, 18.8, kind)),
              ln ? "threads=64 threads_per_row=64 vec=1 registers min_blocks=10"
                 : "threads=512 threads_per_row=32 vec=1 registers");
    EXPECT_EQ(codegen::describe(at(2001, 2, 18.8, kind)),
              ln ? "threads=128 threads_per_row=128 vec=1 registers prefetch min_blocks=2"
                 : "threads=128 threads_per_row=128 vec=1 registers");
    NormProblem fp16 = with_option(1505, DType::F16, kind, no_option);
    fp16.alignment = 2;
    EXPECT_FALSE(choose_launch_config(codegen::resolve_problem(fp16), 90, 132, 67108864 / 1505, 18.8).prefetch)
        << "fp16 rows of an element (LayerNorm's blocks of 96 prefetching took 2x the time at 1409)";
    // fp16 LayerNorm's blocks of 128 and 160 hold 5 and 4 an SM at 96 registers without
    // prefetching (session 54, -odd-occupancy/: ptxas gave 2433-2557 186 registers, two an SM).
    for (auto [n, threads, blocks] : {std::tuple{2001, 128, 5}, {2553, 160, 4}}) {
      fp16.n = n;
      fp16.alignment = 2;
      const LaunchConfig c = choose_launch_config(codegen::resolve_problem(fp16), 90, 132, 67108864 / n, 18.8);
      EXPECT_TRUE(c.threads == threads && !c.prefetch && c.min_blocks_per_sm == (ln ? blocks : 1)) << n << ": " << codegen::describe(c);
    }
    fp16.n = 3002;
    fp16.alignment = 4;
    EXPECT_TRUE(choose_launch_config(codegen::resolve_problem(fp16), 90, 132, 67108864 / 3002, 18.8).prefetch)
        << "fp16 rows of 2-element slots";
    EXPECT_FALSE(at(1508, 8, 18.8, kind).prefetch) << "8-byte aligned rows";
    EXPECT_FALSE(at(1505, 2, 0, kind).prefetch) << "the H100's rule";
    EXPECT_FALSE(at(1505, 2, 18.8, kind, [](NormProblem& p) { p.residual = true; }).prefetch) << "fused";
  }
}

// Fused options on rows of an element, many rows on an H200: blocks of 8 elements a thread, two
// an SM, in the ranges where they measured faster (rich_fused_element_rows, session 56); the
// rules before elsewhere. The recompute's at 2049-3584 and RMSNorm's 16-bit 3841-4096 read their
// weights early (session 57); no other config does.
TEST(LaunchConfig, MemoryRichFusedElementRowsTakeBlocksOfEightTwoAnSm) {
  auto residual = [](NormProblem& p) { p.residual = true; };
  auto all = [](NormProblem& p) {
    p.residual = p.zero_centered_weight = p.rowscale = true;
    p.dropout = DropoutMask::Bits;
  };
  auto gate = [](NormProblem& p) { p.gate = Gate::AfterNorm; };
  auto recompute = [](NormProblem& p) { p.recompute_from_output = true; };
  auto parallel = [](NormProblem& p) { p.parallel = true; };
  auto eights = [](const LaunchConfig& c, int64_t n) {  // whole warps of 8 elements a thread, two an SM
    LaunchConfig late = c;
    late.early_weights = false;
    const std::string threads = std::to_string(codegen::warp_threads(n, 8));
    return codegen::describe(late) == "threads=" + threads + " threads_per_row=" + threads + " vec=1 registers min_blocks=2";
  };
  struct Case {
    int64_t n;
    DType x;
    NormKind kind;
    void (*option)(NormProblem&);
    bool takes;
    const char* why;
  };
  const NormKind ln = NormKind::LayerNorm, rms = NormKind::RMSNorm;
  for (const Case& k : std::initializer_list<Case>{
           {1001, DType::BF16, ln, residual, true, "769-1024"},
           {897, DType::BF16, rms, all, true, "769-1024"},
           {1001, DType::BF16, rms, gate, true, "769-1024"},
           {2561, DType::BF16, ln, all, true, "2561-3072"},
           {3001, DType::BF16, rms, gate, true, "2561-3072"},
           {3001, DType::F32, ln, residual, true, "2561-3072"},
           {3585, DType::BF16, ln, residual, true, "the residual alone to 4096"},
           {4095, DType::BF16, rms, residual, true, "the residual alone to 4096"},
           {4095, DType::BF16, ln, recompute, true, "LayerNorm's recompute, bf16, 3841-4096"},
           {3841, DType::BF16, ln, recompute, true, "LayerNorm's recompute, bf16, 3841-4096"},
           {4095, DType::F16, ln, recompute, false, "fp16's recompute ran its blocks at the best time"},
           {4095, DType::BF16, rms, recompute, true, "RMSNorm's recompute in 16-bit rows of 3841-4096, early"},
           {3841, DType::F16, rms, recompute, true, "RMSNorm's recompute in 16-bit rows of 3841-4096, early"},
           {4095, DType::F32, rms, recompute, false, "not fp32 RMSNorm's recompute at 3841-4096"},
           {2305, DType::F32, ln, recompute, true, "the recompute at 2049-3584, early"},
           {3001, DType::BF16, rms, recompute, true, "the recompute at 2049-3584, early"},
           {3328, DType::F16, ln, recompute, true, "the recompute at 2049-3584, early"},
           {3583, DType::BF16, ln, recompute, true, "the recompute at 2049-3584, early"},
           {2049, DType::F32, rms, recompute, true, "the recompute at 2049-3584, early"},
           {3585, DType::F16, rms, recompute, false, "the recompute at 3585-3840 keeps its blocks"},
           {1985, DType::BF16, ln, recompute, false, "the recompute to 2048 keeps its blocks"},
           {3585, DType::BF16, ln, recompute, false, "recompute lost at 3585"},
           {1001, DType::F32, ln, recompute, false, "fp32 recompute keeps its blocks"},
           {3585, DType::BF16, ln, all, false, "all four lost at 3585 (0.70x)"},
           {3585, DType::BF16, rms, gate, false, "the gate lost at 3585 (0.73x)"},
           {897, DType::BF16, ln, recompute, false, "recompute lost at 897 (LN 0.65x)"},
           {4095, DType::F32, ln, recompute, false, "fp32 recompute lost at 4095 (LN 0.82x)"},
           {4095, DType::BF16, ln, parallel, false, "parallel norms keep their blocks"},
           {1537, DType::BF16, ln, residual, false, "1025-2560 keep their blocks"},
           {4095, DType::BF16, ln, no_option, false, "the option-free rows' own rules"},
       }) {
    const LaunchConfig c = rows_at_rate(k.n, k.x, k.x == DType::F32 ? 4 : 2, 18.4, k.kind, k.option);
    EXPECT_EQ(eights(c, k.n), k.takes) << k.n << " " << codegen::dtype_name(k.x) << " " << codegen::kind_name(k.kind) << " ("
                                        << k.why << "): " << codegen::describe(c);
    const bool early = k.takes && k.option == +recompute && (k.n <= 3584 || k.kind == rms);
    EXPECT_EQ(c.early_weights, early) << k.n << " " << codegen::dtype_name(k.x) << " (" << k.why << "): " << codegen::describe(c);
  }
  EXPECT_FALSE(eights(rows_at_rate(3001, DType::BF16, 2, 0, ln, residual), 3001)) << "the H100's rules";
  EXPECT_FALSE(eights(rows_at_rate(3008, DType::BF16, 16, 18.4, ln, residual), 3008)) << "aligned rows";
  // fp32 recompute rows of 4097-5120 (session 57): their blocks of 8 a thread without the next
  // row, two an SM; the option-free rows, the H100's rules and 5121 on prefetch.
  for (NormKind kind : {ln, rms})
    for (int64_t n : {4097, 4609, 5119}) {
      const LaunchConfig c = rows_at_rate(n, DType::F32, 4, 18.4, kind, recompute);
      EXPECT_TRUE(eights(c, n) && !c.early_weights) << n << ": " << codegen::describe(c);
      EXPECT_TRUE(rows_at_rate(n, DType::F32, 4, 18.4, kind, no_option).prefetch) << n << " option-free";
      EXPECT_TRUE(rows_at_rate(n, DType::F32, 4, 0, kind, recompute).prefetch) << n << " on the H100's rules";
    }
  EXPECT_TRUE(rows_at_rate(5121, DType::F32, 4, 18.4, ln, recompute).prefetch) << "past 5120";
}

TEST(LaunchConfig, MemoryRichFp32ElementRowsDoNotSpillTheirBlocksOfEight) {
  auto at = [](int64_t n, double rate, NormKind kind = NormKind::LayerNorm, void (*option)(NormProblem&) = no_option) {
    return codegen::describe(rows_at_rate(n, DType::F32, 4, rate, kind, option));
  };
  for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm}) {
    const bool ln = kind == NormKind::LayerNorm;
    EXPECT_EQ(at(5001, 18.8, kind), "threads=640 threads_per_row=640 vec=1 registers prefetch") << "the rule before";
    EXPECT_EQ(at(7001, 18.8, kind), "threads=448 threads_per_row=448 vec=1 registers prefetch");
    EXPECT_EQ(at(12001, 18.8, kind), ln ? "threads=768 threads_per_row=768 vec=1 registers shared_sums"
                                        : "threads=384 threads_per_row=384 vec=1 registers");
    EXPECT_EQ(at(20001, 18.8, kind), "threads=640 threads_per_row=640 vec=1 registers cluster=4 prefetch shared_sums");
    EXPECT_EQ(at(30001, 18.8, kind), "threads=480 threads_per_row=480 vec=1 registers cluster=8 min_blocks=2 shared_sums");
    EXPECT_EQ(at(50001, 18.8, kind), ln ? "threads=800 threads_per_row=800 vec=1 registers cluster=8 shared_sums"
                                        : "threads=416 threads_per_row=416 vec=1 registers cluster=8 min_blocks=2 shared_sums");
    // Slots of two (8-byte aligned rows) past 8192: the same shapes in elements.
    EXPECT_EQ(codegen::describe(rows_at_rate(12002, DType::F32, 8, 18.8, kind)),
              ln ? "threads=768 threads_per_row=768 vec=2 registers shared_sums"
                 : "threads=384 threads_per_row=384 vec=2 registers");
    // Without β past 13312 columns: clusters of blocks of 8 a thread with shared sums.
    EXPECT_EQ(codegen::describe(rows_at_rate(13002, DType::F32, 8, 18.8, kind)).find("cluster"), std::string::npos);
    EXPECT_EQ(codegen::describe(rows_at_rate(14002, DType::F32, 8, 18.8, kind)),
              ln ? "threads=896 threads_per_row=896 vec=2 registers shared_sums"
                 : "threads=448 threads_per_row=448 vec=2 registers cluster=4 min_blocks=2 shared_sums");
    EXPECT_FALSE(rows_at_rate(8002, DType::F32, 8, 18.8, kind).prefetch) << "slots of two of 6145-8192 keep their rule";
    EXPECT_EQ(codegen::describe(rows_at_rate(5002, DType::F32, 8, 18.8, kind)),
              "threads=320 threads_per_row=320 vec=2 registers prefetch") << "of 4097-6144 prefetch";
    EXPECT_EQ(rows_at_rate(4502, DType::F32, 8, 18.8, kind).prefetch, ln) << "without β only past 4608";
    // Slots of two of 32769-40960: clusters of four of 16 a thread with β, of sixteen of 8 without.
    EXPECT_EQ(codegen::describe(rows_at_rate(36002, DType::F32, 8, 18.8, kind)),
              ln ? "threads=576 threads_per_row=576 vec=2 registers cluster=4 shared_sums"
                 : "threads=288 threads_per_row=288 vec=2 registers cluster=16 min_blocks=3 shared_sums");
    EXPECT_EQ(at(ln ? 65001 : 60001, 18.8, kind).find("shared_sums"), std::string::npos)
        << "past the blocks where the rule won, the register clusters";
    EXPECT_EQ(at(7001, 0, kind), "threads=896 threads_per_row=896 vec=1 registers prefetch") << "the H100's rule";
    EXPECT_EQ(at(7001, 18.8, kind, [](NormProblem& p) { p.residual = true; }).find("threads=448"), std::string::npos)
        << "fused";
  }
}

TEST(LaunchConfig, MemoryRichSixteenBitSlotRowsHoldTheRowPastFourThousand) {
  auto at = [](int64_t n, int alignment, double rate, NormKind kind = NormKind::LayerNorm, DType x = DType::BF16,
               void (*option)(NormProblem&) = no_option) {
    return codegen::describe(rows_at_rate(n, x, alignment, rate, kind, option));
  };
  for (DType x : {DType::BF16, DType::F16})
    for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm}) {
      const bool ln = kind == NormKind::LayerNorm;
      EXPECT_EQ(at(6002, 4, 18.8, kind, x), "threads=768 threads_per_row=768 vec=2 registers prefetch");
      if (ln)
        EXPECT_NE(at(12002, 4, 18.8, kind, x).find("staged"), std::string::npos) << "blocks of up to 768 threads";
      else
        EXPECT_EQ(at(12002, 4, 18.8, kind, x), "threads=768 threads_per_row=768 vec=2 registers");
      EXPECT_EQ(at(13002, 4, 18.8, kind, x), ln ? "threads=832 threads_per_row=832 vec=2 registers shared_sums"
                                                : "threads=832 threads_per_row=832 vec=2 registers");
      EXPECT_EQ(at(10004, 8, 18.8, kind, x), ln ? "threads=640 threads_per_row=640 vec=4 registers shared_sums"
                                                : "threads=640 threads_per_row=640 vec=4 registers");
      EXPECT_EQ(at(8002, 4, 18.8, kind, x).find("staged") != std::string::npos, ln && x == DType::F16)
          << "fp16 LayerNorm's 1024 prefetching threads spill";
      EXPECT_EQ(at(16002, 4, 18.8, kind, x), ln ? "threads=1024 threads_per_row=1024 vec=2 registers shared_sums"
                                                : "threads=512 threads_per_row=512 vec=2 registers");
      EXPECT_EQ(at(14004, 8, 18.8, kind, x), ln ? "threads=896 threads_per_row=896 vec=4 registers shared_sums"
                                                : "threads=896 threads_per_row=896 vec=4 registers");
      // Slots of four up to 8192: two blocks an SM of 16 elements a thread, LayerNorm's sums
      // shared past 320 threads, 32 a thread without β past 448.
      EXPECT_EQ(at(5004, 8, 18.8, kind, x), "threads=320 threads_per_row=320 vec=4 registers min_blocks=2");
      EXPECT_EQ(at(6004, 8, 18.8, kind, x), ln ? "threads=384 threads_per_row=384 vec=4 registers min_blocks=2 shared_sums"
                                               : "threads=384 threads_per_row=384 vec=4 registers min_blocks=2");
      EXPECT_EQ(at(8004, 8, 18.8, kind, x), ln ? "threads=512 threads_per_row=512 vec=4 registers min_blocks=2 shared_sums"
                                               : "threads=256 threads_per_row=256 vec=4 registers min_blocks=2");
      EXPECT_NE(at(6002, 4, 0, kind, x).find("staged"), std::string::npos) << "the H100's rule";
      EXPECT_NE(at(6002, 4, 18.8, kind, x, [](NormProblem& p) { p.residual = true; }).find("staged"), std::string::npos)
          << "fused";
    }
}

TEST(LaunchConfig, ParsesADescriptionAndNamesWhatItDoesNotKnow) {
  const codegen::LaunchConfig c =
      codegen::parse_described_config("threads=896 threads_per_row=896 vec=1 registers prefetch min_blocks=2 shared_sums");
  EXPECT_EQ(c.threads, 896);
  EXPECT_EQ(c.vec, 1);
  EXPECT_TRUE(c.prefetch && c.shared_sums && c.row_in_registers && !c.staged);
  EXPECT_EQ(c.min_blocks_per_sm, 2);
  EXPECT_EQ(c.cluster, 1);
  for (const char* bad : {"threads=256 threads_per_row=32 vec=8 registers turbo", "threads=256 vec=8",
                          "threads=256 threads_per_row=32 vec=x", "threads=256 threads_per_row=32 vec=8 warps=2",
                          "threads=0 threads_per_row=32 vec=8", ""}) {
    try {
      codegen::parse_described_config(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("launch config"), std::string::npos) << e.what();
    }
  }
}

// What a phased config may be: 16-byte slots of x, one row a block (or cluster) in registers,
// unmerged, for rows in phase; fp32 rows too (the kernel takes them, the heuristic does not yet).
TEST(LaunchConfig, PhasedConfigsAreCheckedAgainstTheirRows) {
  NormProblem p = with_option(5003, DType::BF16, NormKind::LayerNorm, no_option);
  p.alignment = 2;
  p.rows_in_phase = true;
  p = codegen::resolve_problem(p);
  const LaunchConfig c = codegen::parse_described_config("threads=320 threads_per_row=320 vec=8 registers phased");
  EXPECT_NO_THROW(codegen::check_launch_config(p, c));
  auto rejects = [&](const char* config) {
    EXPECT_THROW(codegen::check_launch_config(p, codegen::parse_described_config(config)), std::invalid_argument)
        << config;
  };
  rejects("threads=320 threads_per_row=320 vec=4 registers phased");
  rejects("threads=320 threads_per_row=32 vec=8 registers phased");
  rejects("threads=512 threads_per_row=512 vec=8 registers staged phased");
  rejects("threads=512 threads_per_row=512 vec=8 streamed phased");
  NormProblem fp32 = p;
  fp32.x_dtype = fp32.dy_dtype = fp32.dx_dtype = DType::F32;
  fp32.alignment = 4;
  EXPECT_NO_THROW(codegen::check_launch_config(
      fp32, codegen::parse_described_config("threads=320 threads_per_row=320 vec=4 registers shared_weights phased")));
  NormProblem aligned = p;
  aligned.alignment = 16;
  EXPECT_THROW(codegen::check_launch_config(aligned, c), std::invalid_argument);
  // Rows shorter than a 16-byte chunk share the tensor's last chunk with the rows before them,
  // which would read it whole, past the tensor's end: never phased, nor offered by the tuner.
  const LaunchConfig small = codegen::parse_described_config("threads=64 threads_per_row=64 vec=8 registers phased");
  for (int64_t n : {int64_t{1}, int64_t{3}, int64_t{7}, int64_t{8}, int64_t{9}}) {
    NormProblem short_rows = p;
    short_rows.n = n;
    EXPECT_EQ(codegen::phases_rows(short_rows), n >= 8) << n;
    EXPECT_EQ(codegen::phased_twin(short_rows).has_value(), n >= 8) << n;
    if (n < 8) {
      EXPECT_THROW(codegen::check_launch_config(short_rows, small), std::invalid_argument) << n;
      for (const LaunchConfig& candidate : codegen::search_space(short_rows, 90, 132, 4096, 18.4))
        EXPECT_FALSE(candidate.phased) << n << ": " << codegen::describe(candidate);
    } else {
      EXPECT_NO_THROW(codegen::check_launch_config(short_rows, small)) << n;
    }
  }
  NormProblem fp32_short = fp32;
  fp32_short.n = 3;
  EXPECT_FALSE(codegen::phases_rows(fp32_short)) << "12 bytes";
  fp32_short.n = 5;
  EXPECT_TRUE(codegen::phases_rows(fp32_short)) << "20 bytes";
}
