#include "codegen/phased_rows_config.h"

#include <gtest/gtest.h>

#include <string>

#include "codegen/integer_math.h"
#include "codegen/launch_config.h"
#include "codegen/norm_problem.h"
#include "codegen/search_space.h"

using namespace normjit;
using codegen::choose_launch_config;
using codegen::LaunchConfig;

namespace {
// A LayerNorm (γ, β) or RMSNorm (γ) problem of rows in phase (contiguous tensors) aligned to
// `alignment` bytes, weights in `weight`.
NormProblem rows_in_phase(int64_t n, DType x, DType weight, NormKind kind, int alignment = 2) {
  NormProblem p;
  p.n = n;
  p.x_dtype = x;
  p.kind = kind;
  p.weight_dtype = weight;
  p.has_bias = kind == NormKind::LayerNorm;
  p.alignment = alignment;
  p.rows_in_phase = true;
  return codegen::resolve_problem(p);
}
}  // namespace

// 16-bit rows in phase but aligned to less than 16 bytes (odd N from contiguous tensors) are
// phased where the aligned rows' config for their span (N + 7 columns) is a cluster of two to
// four blocks holding the row in registers: that config, γ held in shared memory; where it is
// one block, RMSNorm's 6145-12281 one prefetching block, the others' halves from 4097 (RMSNorm)
// or 5120 (LayerNorm). Shorter rows: ShortSixteenBitRowsInPhaseTakeTheirTunedBlocks.
// Not where that config is a cluster of eight (phased lost there), rows out of phase, fp32 rows
// (untimed), fused options, nor shapes whose aligned config is no register cluster.
TEST(PhasedRowsConfig, LongSixteenBitRowsInPhaseArePhased) {
  auto in_phase = [](int64_t n, DType x, NormKind kind, int alignment = 2) {
    return rows_in_phase(n, x, DType::F32, kind, alignment);
  };
  for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm})
    for (DType x : {DType::BF16, DType::F16})
      for (int64_t n : {1001, 2001, 4095, 5003, 8191, 12289, 16383, 30001, 65537, 131071}) {
        const NormProblem p = in_phase(n, x, kind);
        const int64_t m = 67108864 / n;
        const LaunchConfig c = choose_launch_config(p, 90, 132, m, 18.8);
        NormProblem aligned = p;
        aligned.alignment = 16;
        aligned.n = n + 7;
        LaunchConfig expected = codegen::twin_launch_config(aligned, 90, 132, m, 18.8);
        const bool register_cluster = expected.row_in_registers && !expected.staged && !expected.grid &&
                                      expected.rows_per_block() == 1 && expected.vec == 8 && expected.cluster > 1 &&
                                      expected.cluster <= codegen::kMaxPhasedCluster;
        // (LayerNorm's paired rows take a cluster of two at 1281-2047.)
        if (x == DType::BF16)
          EXPECT_EQ(register_cluster, n == 16383 || n == 30001 || (kind == NormKind::LayerNorm && n == 2001))
              << n << " " << codegen::describe(expected);
        if (n < (kind == NormKind::RMSNorm ? 4097 : 5120)) continue;  // the short rows' own test
        // RMSNorm's one block of the twin, from 6145 to two slots a thread of 768 threads: one
        // prefetching block of shared sums, as many threads as hold the span at one or two
        // slots a thread; not at few rows, nor by the H100's rules.
        if (kind == NormKind::RMSNorm && n >= 6145 && n <= 12281 && expected.cluster == 1) {
          ASSERT_TRUE(c.phased) << n << " " << codegen::describe(c);
          EXPECT_TRUE(c.prefetch && c.shared_sums && c.shared_weights && c.row_in_registers && !c.staged) << n;
          EXPECT_EQ(c.cluster, 1) << n;
          EXPECT_EQ(c.min_blocks_per_sm, 1) << n;
          const int64_t slots = codegen::ceil_div(n + 7, 8);
          EXPECT_EQ(c.threads, codegen::round_up(codegen::ceil_div(slots, slots > 1024 ? 2 : 1), 32)) << n;
          EXPECT_EQ(codegen::prune_reason(p, c, 90), "") << n << " " << codegen::describe(c);
          EXPECT_NO_THROW(codegen::check_launch_config(p, c));
          EXPECT_FALSE(choose_launch_config(p, 90, 132, 64, 18.8).phased) << n << ": few rows";
          EXPECT_FALSE(choose_launch_config(p, 90, 132, m).phased) << n << ": the H100's rules";
          continue;
        }
        // Else one block of the twin: halved, a cluster of two blocks of shared sums and two
        // slots a thread; not at few rows, nor by the H100's rules.
        const bool halves = expected.cluster == 1;
        if (halves) {
          ASSERT_TRUE(c.phased) << n << " " << codegen::describe(c);
          EXPECT_EQ(c.cluster, 2) << n;
          EXPECT_TRUE(c.shared_sums && c.shared_weights && c.row_in_registers && !c.staged && !c.prefetch) << n;
          EXPECT_EQ(c.threads, codegen::round_up(codegen::ceil_div(codegen::ceil_div(n + 7, 8), 4), 32)) << n;
          EXPECT_LE(codegen::block_slots(p, c), 2 * c.threads) << n << ": two slots a thread";
          EXPECT_GE(c.min_blocks_per_sm, 1);
          EXPECT_LE(c.min_blocks_per_sm * c.threads, codegen::kSharedSumsThreadsPerSm);
          EXPECT_EQ(codegen::prune_reason(p, c, 90), "") << n << " " << codegen::describe(c);
          EXPECT_NO_THROW(codegen::check_launch_config(p, c));
          EXPECT_FALSE(choose_launch_config(p, 90, 132, 64, 18.8).phased) << n << ": few rows";
          EXPECT_FALSE(choose_launch_config(p, 90, 132, m).phased) << n << ": the H100's rules";
          continue;
        }
        if (!register_cluster) {
          EXPECT_FALSE(c.phased) << n << " " << codegen::describe(c);
          continue;
        }
        ASSERT_TRUE(c.phased) << n << " " << codegen::describe(c);
        EXPECT_EQ(c.vec, 8);
        EXPECT_TRUE(c.shared_weights) << n << ": γ read once a block";
        EXPECT_EQ(codegen::row_span(p, c), n + 7);
        EXPECT_EQ(codegen::block_slots(p, c), ((n + 7 + 7) / 8 + c.cluster - 1) / c.cluster);
        expected.phased = true;
        expected.shared_weights = true;
        EXPECT_EQ(codegen::describe(c), codegen::describe(expected)) << n;
        EXPECT_NO_THROW(codegen::check_launch_config(p, c));
        EXPECT_EQ(codegen::parse_described_config(codegen::describe(c)), c);

        NormProblem apart = p;
        apart.rows_in_phase = false;
        EXPECT_FALSE(choose_launch_config(apart, 90, 132, m, 18.8).phased) << n << ": out of phase";
        EXPECT_THROW(codegen::check_launch_config(apart, c), std::invalid_argument);
      }
  // Every phased config of 5000-30000 fits an sm_90 SM (shared sums and γ/β in shared memory
  // at its blocks per SM), with fp32 γ and β or 16-bit ones, and phased wherever the twin is one
  // block or a cluster of two to four (but LayerNorm's rows of an element to 5119).
  for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm})
    for (DType weight : {DType::F32, DType::BF16})
      for (int64_t n = 5001; n <= 30000; n += 46) {
        const NormProblem q = rows_in_phase(n, DType::BF16, weight, kind);
        const LaunchConfig c = choose_launch_config(q, 90, 132, 67108864 / n, 18.8);
        EXPECT_TRUE(c.phased || n > 15000 || (kind == NormKind::LayerNorm && n < 5120))
            << codegen::describe(q) << " " << codegen::describe(c);
        if (c.phased) EXPECT_EQ(codegen::prune_reason(q, c, 90), "") << codegen::describe(q) << " " << codegen::describe(c);
      }
  for (int alignment : {4, 8})
    EXPECT_TRUE(choose_launch_config(in_phase(30002, DType::BF16, NormKind::LayerNorm, alignment), 90, 132, 2236, 18.8)
                    .phased);
  EXPECT_FALSE(choose_launch_config(in_phase(30001, DType::F32, NormKind::LayerNorm, 4), 90, 132, 2236, 18.8).phased)
      << "fp32";
  NormProblem fused = in_phase(30001, DType::BF16, NormKind::RMSNorm);
  fused.residual = true;
  EXPECT_FALSE(choose_launch_config(fused, 90, 132, 2236, 18.8).phased) << "fused options";
  NormProblem aligned = in_phase(30000, DType::BF16, NormKind::RMSNorm, 16);
  EXPECT_FALSE(choose_launch_config(aligned, 90, 132, 2236, 18.8).phased) << "aligned rows";
}

// 16-bit rows in phase of 960-4096 columns (RMSNorm) or 4097-5119 (LayerNorm), many of them on a
// memory-rich sm_90, take the blocks tuning found (codegen/phased_rows_config.cpp,
// short_rows_in_phase_config): RMSNorm to 2047 one prefetching phased block of a slot a thread,
// then one phased block of two slots a thread, both of shared sums and as many blocks an SM as
// shared sums take (whatever the twin's shape: since session 52 the twins of 1001-1017 are a warp
// a row), but at 1018-1023 aligned to 2 or 4 bytes, where the block's last warp would hold one
// slot (session 53: the rules of their alignment there, a warp a row of elements for odd N);
// LayerNorm rows of an element, 16 a thread, two blocks an SM. Not at few rows, by the H100's
// rules, out of phase, in fp32, nor below 960 columns (a warp a row of elements there);
// LayerNorm's rows to 4096 keep the rules of their alignment (also where their twin is a paired
// cluster: not phased). Each config passes its check and fits an SM.
TEST(PhasedRowsConfig, ShortSixteenBitRowsInPhaseTakeTheirTunedBlocks) {
  auto in_phase = [](int64_t n, DType x, DType weight, NormKind kind) { return rows_in_phase(n, x, weight, kind); };
  int taken = 0, skipped = 0;  // shapes of the rules' range whose twin is one block, or not
  for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm})
    for (DType x : {DType::BF16, DType::F16})
      for (DType weight : {DType::F32, x})
        for (int64_t n = 961; n <= 5119; n += (n < 2100 ? 2 : 14)) {
          const NormProblem p = in_phase(n, x, weight, kind);
          const int64_t m = 67108864 / n;
          const LaunchConfig c = choose_launch_config(p, 90, 132, m, 18.4);
          const std::string what = codegen::describe(p) + ": " + codegen::describe(c);
          EXPECT_NO_THROW(codegen::check_launch_config(p, c)) << what;
          NormProblem aligned = p;
          aligned.alignment = 16;
          aligned.n = n + 7;
          const LaunchConfig twin = codegen::twin_launch_config(aligned, 90, 132, m, 18.4);
          if (twin.cluster > 1 && !twin.paired_rows) {  // a cluster's twin: the test above
            skipped += kind == NormKind::RMSNorm ? n < 4097 : n > 4096;
            continue;
          }
          ++taken;
          EXPECT_LE(c.min_blocks_per_sm * codegen::block_shared_bytes(p, c), codegen::max_shared_per_sm(90)) << what;
          const int64_t chunks = codegen::ceil_div(n + 7, 8);
          const bool warp = kind == NormKind::RMSNorm && n >= 1018 && n <= 1023;
          if (warp) {
            EXPECT_EQ(codegen::describe(c), "threads=512 threads_per_row=32 vec=1 registers") << what << ": a warp a row";
          } else if (kind == NormKind::RMSNorm && n < 4097) {
            ASSERT_TRUE(c.phased && c.shared_sums && c.shared_weights && c.row_in_registers) << what;
            EXPECT_EQ(c.cluster, 1) << what;
            EXPECT_EQ(c.prefetch, n < 2048) << what;
            EXPECT_EQ(c.threads, codegen::round_up(codegen::ceil_div(chunks, n < 2048 ? 1 : 2), 32)) << what;
            EXPECT_EQ(c.min_blocks_per_sm, codegen::kSharedSumsThreadsPerSm / c.threads) << what;
          } else if (kind == NormKind::LayerNorm && n > 4096) {
            EXPECT_FALSE(c.phased) << what;
            EXPECT_EQ(c.vec, 1) << what;
            EXPECT_FALSE(c.prefetch || c.staged || c.shared_sums) << what;
            EXPECT_EQ(c.threads, codegen::round_up(codegen::ceil_div(n, 16), 32)) << what;
            EXPECT_EQ(c.min_blocks_per_sm, 2) << what;
          } else if (kind == NormKind::LayerNorm) {
            EXPECT_FALSE(c.phased) << what;
            EXPECT_EQ(c.vec, 1) << what << ": the rules of its alignment";
            // (Since session 53 its blocks of 64 threads hold 10 an SM, fp16's of 96 6, those of
            // 192 3, all without prefetching, and bf16's of 128 prefetch; since session 54 fp16's
            // of 128 hold 5 an SM and of 160 4, without prefetching.)
            const bool fp16 = x == DType::F16;
            if (n <= 1024) EXPECT_TRUE(c.threads == 64 && c.min_blocks_per_sm == 10) << what;
            if (n > 1024 && n <= 1536 && fp16)
              EXPECT_TRUE(c.threads == 96 && !c.prefetch && c.min_blocks_per_sm == 6) << what;
            if (n > 1536 && n <= 2048)
              EXPECT_TRUE(c.threads == 128 && c.prefetch == !fp16 && c.min_blocks_per_sm == (fp16 ? 5 : 2)) << what;
            if (n > 2048 && n <= 2560 && fp16)
              EXPECT_TRUE(c.threads == 160 && !c.prefetch && c.min_blocks_per_sm == 4) << what;
            if (n > 2560 && n <= 3072) EXPECT_TRUE(c.threads == 192 && !c.prefetch && c.min_blocks_per_sm == 3) << what;
            // Since session 54 the blocks of 224 (3073-3584) widen to 256 threads, three an SM.
            if (n > 3072 && n <= 3584) EXPECT_TRUE(c.threads == 256 && !c.prefetch && c.min_blocks_per_sm == 3) << what;
            if (n > 3584 && n <= 4096) EXPECT_EQ(c.min_blocks_per_sm, 1) << what << ": at 3 an SM they spill";
          } else {
            EXPECT_TRUE(c.phased && c.cluster == 2) << what << ": the halves";
          }
          const bool rule = (kind == NormKind::RMSNorm && n < 4097 && !warp) || (kind == NormKind::LayerNorm && n > 4096);
          if (!rule || n % 98 != 1) continue;  // the rest at a sample
          EXPECT_FALSE(choose_launch_config(p, 90, 132, 64, 18.4) == c) << what << ": few rows";
          EXPECT_FALSE(choose_launch_config(p, 90, 132, m) == c) << what << ": the H100's rules";
          NormProblem apart = p;
          apart.rows_in_phase = false;
          EXPECT_FALSE(choose_launch_config(apart, 90, 132, m, 18.4) == c) << what << ": out of phase";
        }
  EXPECT_GT(taken, 8 * skipped) << "the rules' range is mostly twins of one block";
  const LaunchConfig below = choose_launch_config(in_phase(959, DType::BF16, DType::F32, NormKind::RMSNorm), 90, 132, 69977, 18.4);
  EXPECT_EQ(codegen::describe(below), "threads=512 threads_per_row=32 vec=1 registers") << "a warp a row of elements";
  EXPECT_TRUE(choose_launch_config(in_phase(1017, DType::BF16, DType::F32, NormKind::RMSNorm), 90, 132, 65987, 18.4).phased)
      << "its block's last warp holds 32 slots";
  EXPECT_EQ(codegen::describe(
                choose_launch_config(in_phase(1018, DType::BF16, DType::F32, NormKind::RMSNorm), 90, 132, 65922, 18.4)),
            "threads=512 threads_per_row=32 vec=1 registers")
      << "its block's last warp would hold one slot";
  // Rows of 1018 and 1020 as contiguous tensors have them: aligned to 4 bytes, their alignment's
  // blocks of two-element slots; to 8, the phased block still (their blocks were not timed).
  auto in_phase_aligned = [](int64_t n, int alignment) {
    return rows_in_phase(n, DType::BF16, DType::F32, NormKind::RMSNorm, alignment);
  };
  EXPECT_FALSE(choose_launch_config(in_phase_aligned(1018, 4), 90, 132, 65922, 18.4).phased) << "1018, 4 bytes";
  EXPECT_TRUE(choose_launch_config(in_phase_aligned(1020, 8), 90, 132, 65793, 18.4).phased) << "1020, 8 bytes";
  NormProblem fp32 = in_phase(3001, DType::F32, DType::F32, NormKind::RMSNorm);
  fp32.alignment = 4;
  EXPECT_FALSE(choose_launch_config(fp32, 90, 132, 22362, 18.4).phased) << "fp32";
}

// Every N of rows in phase has a config that runs, on the H100's rules and a memory-rich
// device's, for many rows and few: around the longest row clusters hold (262144, whose twins
// 262143-266240 the aligned rules stream) the halves asked for 8224 threads until session 57,
// and the heuristic threw for any 16-bit backward there.
TEST(PhasedRowsConfig, EveryRowInPhaseHasAConfigThatRuns) {
  for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm})
    for (DType x : {DType::BF16, DType::F16})
      for (DType w : {DType::F32, x})
        for (int64_t n : {4097, 6145, 65535, 131073, 196607, 262137, 262143, 262145, 263001, 266239, 266247, 270337,
                          524287, 1048575})
          for (double rate : {0.0, 18.4})
            for (int64_t m : {int64_t{1}, 67108864 / n + 1}) {
              const NormProblem p = rows_in_phase(n, x, w, kind);
              LaunchConfig c;
              EXPECT_NO_THROW(c = choose_launch_config(p, 90, 132, m, rate))
                  << codegen::describe(p) << " M=" << m << " rate " << rate;
              EXPECT_NO_THROW(codegen::check_launch_config(p, c)) << codegen::describe(c);
              EXPECT_NO_THROW(codegen::search_space(p, 90, 132, m, rate)) << codegen::describe(p);
            }
}
