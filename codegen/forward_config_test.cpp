// The forward's problem rules, its launch config heuristic and its generated source: pure C++.
#include "codegen/forward_config.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <set>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "codegen/cache_key.h"
#include "codegen/integer_math.h"
#include "codegen/kernel_source.h"
#include "codegen/norm_problem.h"
#include "normjit/normjit.hpp"

using namespace normjit;

namespace {

NormProblem problem(NormKind kind, int64_t n, DType x, DType weight = DType::F32) {
  NormProblem p;
  p.kind = kind;
  p.n = n;
  p.x_dtype = x;
  p.weight_dtype = weight;
  p.has_bias = kind == NormKind::LayerNorm;
  return codegen::resolve_forward_problem(p);
}

std::string forward_source(const NormProblem& p) {
  return codegen::generate_forward_source(p, codegen::choose_forward_config(p)).text;
}

}  // namespace

namespace {

// Each fused option alone, on a problem it applies to (the gate is RMSNorm's only).
struct ForwardOption {
  const char* name;
  void (*set)(NormProblem&);
};
const ForwardOption kForwardOptions[] = {
    {"residual", [](NormProblem& p) { p.residual = true; }},
    {"rowscale", [](NormProblem& p) { p.rowscale = true; }},
    {"dropout=bytes", [](NormProblem& p) { p.dropout = DropoutMask::Bytes; }},
    {"dropout=bits", [](NormProblem& p) { p.dropout = DropoutMask::Bits; }},
    {"gate=after-norm",
     [](NormProblem& p) {
       p.kind = NormKind::RMSNorm;
       p.has_bias = false;
       p.gate = Gate::AfterNorm;
     }},
    {"gate=before-norm",
     [](NormProblem& p) {
       p.kind = NormKind::RMSNorm;
       p.has_bias = false;
       p.gate = Gate::BeforeNorm;
     }},
    {"parallel", [](NormProblem& p) { p.parallel = true; }},
    {"recompute", [](NormProblem& p) { p.recompute_from_output = true; }},
    {"zero-centered-weight", [](NormProblem& p) { p.zero_centered_weight = true; }},
};

}  // namespace

TEST(ForwardProblem, TakesEveryFusedOption) {
  for (const ForwardOption& o : kForwardOptions) {
    NormProblem p = problem(NormKind::LayerNorm, 4096, DType::BF16);
    o.set(p);
    EXPECT_NO_THROW(codegen::validate_forward_problem(p)) << o.name;
  }
  // Several at once: everything h can be formed from, and parallel norms of it.
  NormProblem all = problem(NormKind::LayerNorm, 4096, DType::BF16);
  all.residual = all.rowscale = all.parallel = all.zero_centered_weight = true;
  all.dropout = DropoutMask::Bits;
  EXPECT_NO_THROW(codegen::validate_forward_problem(all));
  NormProblem gated = problem(NormKind::RMSNorm, 4096, DType::BF16);
  gated.residual = gated.rowscale = true;
  gated.dropout = DropoutMask::Bytes;
  gated.gate = Gate::BeforeNorm;
  EXPECT_NO_THROW(codegen::validate_forward_problem(gated));
}

TEST(ForwardProblem, StillRejectsWhatNoNormIs) {
  struct Bad {
    const char* name;
    void (*set)(NormProblem&);
    const char* message;
  };
  const Bad bad[] = {
      {"gate on LayerNorm", [](NormProblem& p) { p.gate = Gate::AfterNorm; }, "is set on a LayerNorm"},
      {"gate before the norm on LayerNorm", [](NormProblem& p) { p.gate = Gate::BeforeNorm; },
       "is set on a LayerNorm"},
      {"gate and parallel",
       [](NormProblem& p) {
         p.kind = NormKind::RMSNorm;
         p.has_bias = false;
         p.gate = Gate::AfterNorm;
         p.parallel = true;
       },
       "parallel and gate are both set"},
      {"zero-centred without weight",
       [](NormProblem& p) {
         p.has_weight = false;
         p.zero_centered_weight = true;
       },
       "zero_centered_weight"},
      {"unknown dropout form", [](NormProblem& p) { p.dropout = static_cast<DropoutMask>(7); }, "dropout mask form 7"},
      {"unknown y dtype", [](NormProblem& p) { p.dy_dtype = static_cast<DType>(9); }, "dy dtype 9"},
  };
  for (const Bad& b : bad) {
    NormProblem p = problem(NormKind::LayerNorm, 4096, DType::BF16);
    b.set(p);
    try {
      codegen::validate_forward_problem(p);
      ADD_FAILURE() << b.name << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.status(), Status::InvalidArgument) << b.name;
      EXPECT_NE(std::string(e.what()).find(b.message), std::string::npos) << b.name << ": " << e.what();
      EXPECT_NE(std::string(e.what()).find(" forward with N="), std::string::npos) << b.name << ": " << e.what();
    }
  }
}

// recompute_from_output is the backward's choice of what to read: the forward ignores it, so
// its conflicts with the gate and parallel norms (the backward's) are not the forward's.
TEST(ForwardProblem, RecomputeConflictsWithNothing) {
  NormProblem gated = problem(NormKind::RMSNorm, 4096, DType::BF16);
  gated.has_bias = false;
  gated.gate = Gate::BeforeNorm;
  gated.recompute_from_output = true;
  EXPECT_NO_THROW(codegen::validate_forward_problem(gated));
  NormProblem parallel = problem(NormKind::LayerNorm, 4096, DType::BF16);
  parallel.parallel = true;
  parallel.recompute_from_output = true;
  EXPECT_NO_THROW(codegen::validate_forward_problem(parallel));
  EXPECT_THROW(codegen::validate_problem(parallel), Error);  // the backward still rejects it
}

TEST(ForwardProblem, HasForwardFusedOptionsOnlyForWhatChangesTheKernelsCode) {
  const NormProblem plain = problem(NormKind::LayerNorm, 4096, DType::BF16);
  EXPECT_FALSE(codegen::has_forward_fused_options(plain));
  for (const ForwardOption& o : kForwardOptions) {
    NormProblem p = plain;
    o.set(p);
    // zero-centred γ is one of the plain constants; recompute is the backward's choice.
    const bool fused = std::string(o.name) != "recompute" && std::string(o.name) != "zero-centered-weight";
    EXPECT_EQ(codegen::has_forward_fused_options(p), fused) << o.name;
  }
  NormProblem other_dtypes = plain;
  other_dtypes.dy_dtype = DType::F32;
  other_dtypes.dx_dtype = DType::F16;
  EXPECT_FALSE(codegen::has_forward_fused_options(other_dtypes));
}

TEST(ForwardProblem, RunsTheBackwardsChecksToo) {
  NormProblem p = problem(NormKind::LayerNorm, 0, DType::BF16);
  EXPECT_THROW(codegen::validate_forward_problem(p), Error);
  p = problem(NormKind::LayerNorm, 64, DType::BF16, DType::F16);  // weight neither fp32 nor x's dtype
  EXPECT_THROW(codegen::validate_forward_problem(p), Error);
}

TEST(ForwardProblem, KeepsTheYDtypeAndIgnoresTheBackwardOnlyFields) {
  // y is stored in dy_dtype: its default is x's dtype, any other is kept.
  NormProblem raw;
  raw.kind = NormKind::LayerNorm;
  raw.n = 4096;
  raw.x_dtype = DType::BF16;
  raw.weight_dtype = DType::F32;
  raw.has_bias = true;
  EXPECT_EQ(codegen::resolve_forward_problem(raw).dy_dtype, DType::BF16);
  for (DType y : {DType::F32, DType::F16, DType::BF16}) {
    NormProblem p = raw;
    p.dy_dtype = y;
    EXPECT_EQ(codegen::resolve_forward_problem(p).dy_dtype, y);
  }
  // dx_dtype takes x's dtype and recompute_from_output is cleared: two problems differing only
  // there are one forward problem, one source.
  const NormProblem a = codegen::resolve_forward_problem(raw);
  EXPECT_EQ(a.dx_dtype, DType::BF16);
  EXPECT_FALSE(a.recompute_from_output);
  NormProblem dx = raw;
  dx.dx_dtype = DType::F32;
  NormProblem recompute = raw;
  recompute.recompute_from_output = true;
  NormProblem both = raw;
  both.dx_dtype = DType::F16;
  both.recompute_from_output = true;
  for (const NormProblem& other : {dx, recompute, both}) {
    const NormProblem b = codegen::resolve_forward_problem(other);
    EXPECT_TRUE(a == b) << codegen::describe(other);
    EXPECT_EQ(b.dx_dtype, DType::BF16);
    EXPECT_FALSE(b.recompute_from_output);
    EXPECT_EQ(forward_source(a), forward_source(b)) << codegen::describe(other);
  }
  // With a fused option too.
  NormProblem fused = raw;
  fused.residual = true;
  NormProblem fused_other = fused;
  fused_other.dx_dtype = DType::F32;
  fused_other.recompute_from_output = true;
  EXPECT_TRUE(codegen::resolve_forward_problem(fused) == codegen::resolve_forward_problem(fused_other));
  // A y dtype other than x's is another problem, another source.
  NormProblem y32 = raw;
  y32.dy_dtype = DType::F32;
  const NormProblem c = codegen::resolve_forward_problem(y32);
  EXPECT_FALSE(a == c);
  EXPECT_NE(forward_source(a), forward_source(c));
  // Resolving twice changes nothing.
  EXPECT_TRUE(codegen::resolve_forward_problem(c) == c);
}

TEST(ForwardProblem, DescribeForwardShowsTheYDtypeAndTheOptions) {
  NormProblem p;
  p.kind = NormKind::RMSNorm;
  p.n = 4096;
  p.x_dtype = DType::BF16;
  p.dy_dtype = DType::F32;
  p.dx_dtype = DType::F16;  // the backward's: not shown
  p.weight_dtype = DType::BF16;
  p.residual = true;
  p.dropout = DropoutMask::Bits;
  EXPECT_EQ(codegen::describe_forward(p),
            "rmsnorm forward N=4096 x=bf16 y=fp32 weight=bf16 +weight align=16 +residual +dropout=bits");
  EXPECT_EQ(codegen::describe(p, codegen::Pass::Forward), codegen::describe_forward(p));
  EXPECT_NE(codegen::describe(p, codegen::Pass::Backward), codegen::describe_forward(p));
  p.recompute_from_output = true;  // cleared by the forward: not shown
  EXPECT_EQ(codegen::describe_forward(p),
            "rmsnorm forward N=4096 x=bf16 y=fp32 weight=bf16 +weight align=16 +residual +dropout=bits");
  NormProblem ln = problem(NormKind::LayerNorm, 4096, DType::BF16);
  EXPECT_EQ(codegen::describe_forward(ln), "layernorm forward N=4096 x=bf16 y=bf16 weight=fp32 +weight +bias align=16");
  ln.zero_centered_weight = ln.rowscale = ln.parallel = true;
  ln.dropout = DropoutMask::Bytes;
  ln.alignment = 4;
  EXPECT_EQ(codegen::describe_forward(ln),
            "layernorm forward N=4096 x=bf16 y=bf16 weight=fp32 +weight +bias align=4 +zero-centered-weight "
            "+rowscale +dropout=bytes +parallel");
  NormProblem gated = problem(NormKind::RMSNorm, 1000, DType::F16);
  gated.gate = Gate::BeforeNorm;
  gated.has_weight = false;
  EXPECT_EQ(codegen::describe_forward(gated), "rmsnorm forward N=1000 x=fp16 y=fp16 weight=fp16 -weight align=16 "
                                              "+gate=before-norm");
  gated.gate = Gate::AfterNorm;
  EXPECT_NE(codegen::describe_forward(gated).find(" +gate=after-norm"), std::string::npos);
  // The options part is describe_options, the same as the backward's describe gives.
  NormProblem shared = problem(NormKind::LayerNorm, 64, DType::F32);
  shared.residual = shared.rowscale = true;
  shared.dropout = DropoutMask::Bits;
  const std::string options = codegen::describe_options(shared);
  EXPECT_EQ(options, " +residual +rowscale +dropout=bits");
  const std::string fwd = codegen::describe_forward(shared), bwd = codegen::describe(shared);
  EXPECT_EQ(fwd.substr(fwd.size() - options.size()), options);
  EXPECT_EQ(bwd.substr(bwd.size() - options.size()), options);
  EXPECT_EQ(codegen::describe_options(problem(NormKind::LayerNorm, 64, DType::F32)), "");
}

TEST(ForwardConfig, PicksEachFamilyByRowLength) {
  // bf16, 16-byte aligned: 8 elements a slot.
  auto config = [](int64_t n, DType x = DType::BF16, int alignment = 16) {
    NormProblem p = problem(NormKind::LayerNorm, n, x);
    p.alignment = alignment;
    return codegen::choose_forward_config(p);
  };
  EXPECT_EQ(config(1).threads_per_row, 1);
  EXPECT_EQ(config(1).threads, 256);
  EXPECT_EQ(config(33).threads_per_row, 8);  // 5 slots
  EXPECT_EQ(config(1000).threads_per_row, 32);  // 125 slots, 4 a lane
  const codegen::LaunchConfig c4096 = config(4096);
  EXPECT_TRUE(c4096.row_in_registers);
  EXPECT_EQ(c4096.threads_per_row, c4096.threads);
  const codegen::LaunchConfig c163840 = config(163840);  // a cluster of 8 would take blocks of 640
  EXPECT_FALSE(c163840.row_in_registers);
  EXPECT_EQ(c163840.threads, codegen::kForwardStreamThreads);
  // Misaligned odd rows: a scalar a slot.
  EXPECT_EQ(config(5003, DType::BF16, 2).vec, 1);
  for (int64_t n : {1, 2, 3, 31, 32, 33, 127, 1000, 1024, 4095, 4096, 5003, 8192, 16384, 32768, 65536, 262144})
    for (DType x : {DType::F32, DType::F16, DType::BF16})
      for (int alignment : {2, 4, 16}) {
        NormProblem p = problem(NormKind::RMSNorm, n, x);
        p.alignment = alignment;
        EXPECT_NO_THROW(codegen::check_forward_config(p, codegen::choose_forward_config(p)))
            << codegen::describe_forward(p);
      }
}

// 16-bit rows aligned to 2 bytes below the realigned rule (kRealignedForwardRowsFrom): the
// fewest of 8, 16 or 32 elements a thread that keep the block within 576 threads, else 8 (the
// exhaustive tuning's best at each of these, bench/NOTES.md entry 34).
TEST(ForwardConfig, RowsOfTwoByteSlotsTakeBlocksOfAtMost576ThreadsWhereTheyCan) {
  for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm})
    for (DType x : {DType::BF16, DType::F16}) {
      auto threads = [&](int64_t n) {
        NormProblem p = problem(kind, n, x);
        p.alignment = 2;
        const codegen::LaunchConfig c = codegen::choose_forward_config(p, 90);
        EXPECT_EQ(c.vec, 1) << n;
        EXPECT_TRUE(c.row_in_registers) << n;
        return c.threads;
      };
      EXPECT_EQ(threads(4095), 512);   // 8 a thread
      EXPECT_EQ(threads(5003), 320);   // 16
      EXPECT_EQ(threads(8191), 512);   // 16
      EXPECT_EQ(threads(12289), 416);  // 32
      EXPECT_EQ(threads(16385), 544);  // 32
      EXPECT_EQ(threads(24577), 1024);  // 32 would take 800 threads: 8 a thread, capped
    }
}

// Rows of at most kFewElementSlots elements a thread a pass: blocks bounded to fill the SM's
// threads (16-bit x) or to two an SM at least (fp32), and unfilled_forward_config the same block
// at 64 registers a thread, which the engine takes where the filled one spills.
TEST(ForwardConfig, RowsOfFewElementsAThreadFillTheSmWithAnUnfilledFallback) {
  auto config = [](NormKind kind, int64_t n, DType x, int alignment) {
    NormProblem p = problem(kind, n, x);
    p.alignment = alignment;
    return std::make_pair(p, codegen::choose_forward_config(p, 90));
  };
  for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm}) {
    for (int64_t n : {1025, 2049, 3001, 4095}) {
      const auto [p, c] = config(kind, n, DType::BF16, 2);
      ASSERT_EQ(c.vec, 1) << n;
      EXPECT_LE(codegen::ceil_div(n, int64_t{c.threads}), codegen::kFewElementSlots) << n;
      EXPECT_EQ(c.min_blocks_per_sm, codegen::kThreadsPerSm / c.threads) << n;
      const std::optional<codegen::LaunchConfig> unfilled = codegen::unfilled_forward_config(p, c);
      ASSERT_TRUE(unfilled.has_value()) << n;
      EXPECT_EQ(unfilled->min_blocks_per_sm,
                codegen::kRegistersPerSm / (c.threads * codegen::kForwardRegistersPerThread)) << n;
      codegen::LaunchConfig rest = *unfilled;
      rest.min_blocks_per_sm = c.min_blocks_per_sm;
      EXPECT_EQ(codegen::describe(rest), codegen::describe(c)) << "only the bound differs, N = " << n;
    }
    // fp32 rows of 768 and 1024 threads: two blocks an SM (one at 64 registers a thread).
    for (int64_t n : {6001, 8191}) {
      const auto [p, c] = config(kind, n, DType::F32, 4);
      ASSERT_GT(c.threads, 512) << n;
      EXPECT_EQ(c.min_blocks_per_sm, 2) << n;
      ASSERT_TRUE(codegen::unfilled_forward_config(p, c).has_value()) << n;
      EXPECT_EQ(codegen::unfilled_forward_config(p, c)->min_blocks_per_sm, 1) << n;
    }
    // fp32 rows of at most 512 threads keep their bound: nothing to fall back to.
    const auto [p4095, c4095] = config(kind, 4095, DType::F32, 4);
    EXPECT_EQ(c4095.min_blocks_per_sm, 2);
    EXPECT_FALSE(codegen::unfilled_forward_config(p4095, c4095).has_value());
    // More elements a thread (5003 at 320 threads: 16), vector slots, fused options: as before.
    for (const auto& [n, x, alignment] : {std::tuple{int64_t{5003}, DType::BF16, 2}, std::tuple{int64_t{4096}, DType::BF16, 16},
                                          std::tuple{int64_t{12289}, DType::BF16, 2}}) {
      const auto [p, c] = config(kind, n, x, alignment);
      EXPECT_FALSE(codegen::unfilled_forward_config(p, c).has_value()) << n;
    }
    NormProblem fused = problem(kind, 3001, DType::BF16);
    fused.alignment = 2;
    fused.residual = true;
    const codegen::LaunchConfig cf = codegen::choose_forward_config(fused, 90);
    EXPECT_EQ(cf.min_blocks_per_sm, codegen::kRegistersPerSm / (cf.threads * codegen::kForwardRegistersPerThread));
    EXPECT_FALSE(codegen::unfilled_forward_config(fused, cf).has_value());
  }
}

TEST(ForwardConfig, ClustersHoldLongRowsOnSm90Only) {
  const NormProblem rms = problem(NormKind::RMSNorm, 65536, DType::BF16);
  const codegen::LaunchConfig c90 = codegen::choose_forward_config(rms, 90);
  EXPECT_TRUE(c90.row_in_registers);
  EXPECT_EQ(c90.cluster, 2);
  EXPECT_NO_THROW(codegen::check_forward_config(rms, c90));
  const codegen::LaunchConfig c80 = codegen::choose_forward_config(rms, 80);
  EXPECT_EQ(c80.cluster, 1);
  EXPECT_FALSE(c80.row_in_registers);
  // LayerNorm's 16-bit rows take clusters of 1024-thread blocks only (65536: 2, 131072: 4,
  // 262144: 8); rows that would take narrower blocks (98304: 4 x 768) and parallel norms are
  // streamed. fp32 rows take clusters of 512-thread blocks (tuned).
  for (const auto& [n, cluster] : {std::pair{int64_t{65536}, 2}, std::pair{int64_t{131072}, 4}, std::pair{int64_t{262144}, 8}}) {
    const NormProblem ln = problem(NormKind::LayerNorm, n, DType::BF16);
    const codegen::LaunchConfig c = codegen::choose_forward_config(ln, 90);
    EXPECT_TRUE(c.row_in_registers) << n;
    EXPECT_EQ(c.cluster, cluster) << n;
    EXPECT_EQ(c.threads, 1024) << n;
    EXPECT_NO_THROW(codegen::check_forward_config(ln, c)) << n;
    EXPECT_FALSE(codegen::choose_forward_config(ln, 80).row_in_registers) << n;
  }
  NormProblem parallel = problem(NormKind::LayerNorm, 65536, DType::BF16);
  parallel.parallel = true;
  for (const NormProblem& ln : {problem(NormKind::LayerNorm, 98304, DType::BF16), parallel}) {
    const codegen::LaunchConfig c = codegen::choose_forward_config(ln, 90);
    EXPECT_FALSE(c.row_in_registers) << codegen::describe_forward(ln);
    EXPECT_EQ(c.cluster, 1) << codegen::describe_forward(ln);
  }
  const codegen::LaunchConfig ln32 = codegen::choose_forward_config(problem(NormKind::LayerNorm, 65536, DType::F32), 90);
  EXPECT_EQ(ln32.cluster, 8);
  EXPECT_EQ(ln32.threads, 512);
}

// Streamed rows, fewer than the SMs (by m's power-of-two bucket): on sm_90 a cluster of blocks
// streams each row, the most that keep bucket × cluster within the SMs (8 at most), each
// thread still streaming two batches at least; never on sm_80, for many rows or m unknown.
TEST(ForwardConfig, FewLongStreamedRowsAreSharedByClustersOnSm90) {
  struct Case { NormKind kind; int64_t n; DType x; int64_t m; int sm_count; int cluster; };
  const Case cases[] = {{NormKind::LayerNorm, 1048576, DType::BF16, 64, 132, 2},
                        {NormKind::LayerNorm, 1048576, DType::BF16, 37, 132, 2},
                        {NormKind::LayerNorm, 1048576, DType::BF16, 33, 132, 2},  // bucket 64
                        {NormKind::LayerNorm, 1048576, DType::BF16, 32, 132, 4},
                        {NormKind::LayerNorm, 1048576, DType::BF16, 1, 132, 8},
                        {NormKind::LayerNorm, 1048576, DType::BF16, 64, 114, 1},
                        {NormKind::LayerNorm, 1048576, DType::BF16, 65, 132, 1},
                        {NormKind::LayerNorm, 163840, DType::BF16, 409, 132, 1},
                        {NormKind::LayerNorm, 262144, DType::F32, 16, 132, 8},
                        {NormKind::RMSNorm, 1048576, DType::F32, 64, 132, 2},
                        {NormKind::LayerNorm, 98304, DType::BF16, 1, 132, 2},  // 12288 slots: two batches a thread
                        {NormKind::LayerNorm, 1048576, DType::BF16, -1, 132, 1}};
  for (const Case& k : cases) {
    const NormProblem p = codegen::resolve_forward_problem(problem(k.kind, k.n, k.x));
    const codegen::LaunchConfig c = codegen::choose_forward_config(p, 90, k.m, k.sm_count);
    const std::string what = codegen::describe_forward(p) + " m=" + std::to_string(k.m) + " on " +
                             std::to_string(k.sm_count) + " SMs: " + codegen::describe(c);
    EXPECT_FALSE(c.row_in_registers) << what;
    EXPECT_EQ(c.cluster, k.cluster) << what;
    EXPECT_NO_THROW(codegen::check_forward_config(p, c)) << what;
    EXPECT_EQ(codegen::choose_forward_config(p, 80, k.m, k.sm_count).cluster, 1) << what;
  }
  // The tuner has streamed clusters on sm_90 only.
  const NormProblem ln = codegen::resolve_forward_problem(problem(NormKind::LayerNorm, 262144, DType::BF16));
  for (int sm : {80, 90}) {
    int streamed_clusters = 0;
    for (const codegen::LaunchConfig& c : codegen::forward_search_space(ln, sm))
      streamed_clusters += !c.row_in_registers && c.cluster > 1;
    EXPECT_EQ(streamed_clusters > 0, sm >= 90) << sm;
  }
}

// Streamed rows at twice the SMs or more (or m unknown), option-free: two 512-thread blocks an
// SM where 1024 threads would take a second batch a thread for at most half a batch more of
// the row (16-bit: 32768 < N <= 49152), else the fewest threads that take as many batches as
// 1024 (a multiple of 32); fewer rows, and fused options, keep 1024.
TEST(ForwardConfig, StreamedBlocksAreAsWideAsTheRowsBatches) {
  struct Case { int64_t n; int64_t m; int threads; int min_blocks; };
  const Case cases[] = {{33792, -1, 512, 2},  {36864, 1820, 512, 2}, {49152, 1365, 512, 2},
                        {57344, 1170, 896, 1}, {163840, 409, 1024, 1}, {81920, 819, 864, 1},
                        {98304, 682, 1024, 1}, {196608, 341, 1024, 1}, {36864, 200, 1024, 1},
                        {36864, 1, 1024, 1}};
  for (DType x : {DType::BF16, DType::F16})
    for (const Case& k : cases) {
      const NormProblem p = codegen::resolve_forward_problem(problem(NormKind::LayerNorm, k.n, x));
      const codegen::LaunchConfig c = codegen::choose_forward_config(p, 90, k.m, 132);
      const std::string what = codegen::describe_forward(p) + " m=" + std::to_string(k.m) + ": " + codegen::describe(c);
      EXPECT_FALSE(c.row_in_registers) << what;
      EXPECT_EQ(c.cluster, 1) << what;
      EXPECT_EQ(c.threads, k.threads) << what;
      EXPECT_EQ(c.min_blocks_per_sm, k.min_blocks) << what;
      EXPECT_NO_THROW(codegen::check_forward_config(p, c)) << what;
      // Each is in the tuner's search space.
      const std::vector<codegen::LaunchConfig> space = codegen::forward_search_space(p, 90, k.m);
      EXPECT_NE(std::find(space.begin(), space.end(), c), space.end()) << what;
    }
  NormProblem fused = problem(NormKind::LayerNorm, 36864, DType::BF16);
  fused.residual = true;
  fused = codegen::resolve_forward_problem(fused);
  // (sm_80: on sm_90 a pre-norm sum this long takes a cluster.)
  const codegen::LaunchConfig c = codegen::choose_forward_config(fused, 80, -1, 132);
  EXPECT_FALSE(c.row_in_registers) << codegen::describe(c);
  EXPECT_EQ(c.threads, 1024) << codegen::describe(c);
}

// Rows a warp holds: half a warp where that leaves no lane idle in the last pass, in slots of
// half the width where that leaves fewer elements idle (N = 320: 16 lanes of 8-byte slots).
TEST(ForwardConfig, ShortRowsTakeTheLanesAndSlotsThatLeaveNoneIdle) {
  struct Case { int64_t n; int vec; int lanes; };
  const Case cases[] = {{320, 4, 16}, {448, 4, 16}, {640, 4, 32}, {768, 8, 32}, {1000, 8, 32}, {1024, 8, 32}};
  for (const Case& k : cases) {
    const NormProblem p = codegen::resolve_forward_problem(problem(NormKind::LayerNorm, k.n, DType::BF16));
    const codegen::LaunchConfig c = codegen::choose_forward_config(p, 90);
    EXPECT_EQ(c.vec, k.vec) << k.n << ": " << codegen::describe(c);
    EXPECT_EQ(c.threads_per_row, k.lanes) << k.n << ": " << codegen::describe(c);
    EXPECT_NO_THROW(codegen::check_forward_config(p, c));
  }
}

// fp32 rows a cluster of 8 holds only in wider blocks at the target bytes (LayerNorm beyond
// 65536, RMSNorm beyond 131072): 128 bytes a thread in the fewest blocks of at most 640
// (LayerNorm) or 768 threads, one block an SM, where that takes fewer blocks or the target's
// are wider than 768 threads (LN 86016 and 98304 keep 8 blocks at 64 bytes); streamed beyond
// (LN 180224, 262144).
TEST(ForwardConfig, WideFp32RowsTake128BytesAThreadInClusters) {
  struct Case { NormKind kind; int64_t n; int cluster; int threads; int min_blocks; };
  const Case cases[] = {{NormKind::LayerNorm, 65536, 8, 512, 2},   {NormKind::LayerNorm, 81920, 4, 640, 1},
                        {NormKind::LayerNorm, 86016, 8, 672, 1},   {NormKind::LayerNorm, 98304, 8, 768, 1},
                        {NormKind::LayerNorm, 110592, 8, 448, 1},  {NormKind::LayerNorm, 131072, 8, 512, 1},
                        {NormKind::LayerNorm, 163840, 8, 640, 1},
                        {NormKind::RMSNorm, 131072, 8, 1024, 1},   {NormKind::RMSNorm, 163840, 8, 640, 1},
                        {NormKind::RMSNorm, 196608, 8, 768, 1}};
  for (const Case& k : cases) {
    const NormProblem p = codegen::resolve_forward_problem(problem(k.kind, k.n, DType::F32));
    const codegen::LaunchConfig c = codegen::choose_forward_config(p, 90, 512, 132);
    const std::string what = codegen::describe_forward(p) + ": " + codegen::describe(c);
    EXPECT_TRUE(c.row_in_registers) << what;
    EXPECT_EQ(c.cluster, k.cluster) << what;
    EXPECT_EQ(c.threads, k.threads) << what;
    EXPECT_EQ(c.min_blocks_per_sm, k.min_blocks) << what;
    EXPECT_NO_THROW(codegen::check_forward_config(p, c)) << what;
  }
  for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm})
    EXPECT_FALSE(codegen::choose_forward_config(codegen::resolve_forward_problem(problem(kind, 262144, DType::F32)), 90)
                     .row_in_registers);
  EXPECT_FALSE(codegen::choose_forward_config(
                   codegen::resolve_forward_problem(problem(NormKind::LayerNorm, 196608, DType::F32)), 90)
                   .row_in_registers);
}

// LayerNorm rows of 16-bit x with fp32 γ/β that take more than 512 threads at 8-element slots
// use 4-element slots (γ and β one 16-byte load a slot), 64 bytes of x a thread as before; not
// RMSNorm, not same-dtype weights, not rows of 512 threads or fewer.
TEST(ForwardConfig, LongLayerNormRowsWithFp32WeightsTakeFourElementSlots) {
  for (int64_t n : {16385, 17408, 24576, 32768}) {
    const NormProblem p = codegen::resolve_forward_problem(problem(NormKind::LayerNorm, n, DType::BF16));
    ASSERT_EQ(p.weight_dtype, DType::F32);
    const codegen::LaunchConfig c = codegen::choose_forward_config(p, 90);
    EXPECT_TRUE(c.row_in_registers && c.cluster == 1) << n << " " << codegen::describe(c);
    EXPECT_EQ(c.vec, 4) << n;
    EXPECT_EQ(c.threads, ((n + 31) / 32 + 31) / 32 * 32) << n;  // 8 slots of 4 a thread, whole warps
    EXPECT_NO_THROW(codegen::check_forward_config(p, c)) << n;
  }
  EXPECT_EQ(codegen::choose_forward_config(
                codegen::resolve_forward_problem(problem(NormKind::LayerNorm, 16384, DType::BF16)), 90).vec, 8);
  EXPECT_EQ(codegen::choose_forward_config(
                codegen::resolve_forward_problem(problem(NormKind::RMSNorm, 32768, DType::BF16)), 90).vec, 8);
  NormProblem same = problem(NormKind::LayerNorm, 32768, DType::BF16);
  same.weight_dtype = DType::BF16;
  EXPECT_EQ(codegen::choose_forward_config(codegen::resolve_forward_problem(same), 90).vec, 8);
}

TEST(ForwardConfig, LongSixteenBitRowsWithAPreNormSumTakeClustersOfEight) {
  for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm})
    for (int64_t n : {32768, 65536, 131072}) {
      NormProblem p = problem(kind, n, DType::BF16);
      const codegen::LaunchConfig plain = codegen::choose_forward_config(p, 90);
      p.residual = true;
      const codegen::LaunchConfig c = codegen::choose_forward_config(p, 90);
      EXPECT_EQ(c.cluster, 8) << codegen::describe_forward(p);
      // Two 16-byte slots a thread, four where that takes more than 512 threads (LayerNorm) or
      // 256 (RMSNorm).
      const int64_t most = kind == NormKind::LayerNorm ? 512 : 256;
      const int per_thread = n / (8 * 2 * c.vec) <= most ? 2 : 4;
      EXPECT_EQ(int64_t{c.cluster} * c.threads * per_thread * c.vec, n) << codegen::describe_forward(p);
      EXPECT_EQ(c.min_blocks_per_sm, std::max(1, 65536 / (c.threads * 64)));
      EXPECT_FALSE(c == plain) << "the option-free forward keeps its config";
      EXPECT_EQ(codegen::choose_forward_config(p, 80).cluster, 1) << "no clusters before sm_90";
    }
  // LayerNorm with dropout where that would take four slots a thread: streamed by 512-thread
  // blocks, two an SM.
  NormProblem dropped = problem(NormKind::LayerNorm, 131072, DType::BF16);
  dropped.residual = true;
  dropped.dropout = DropoutMask::Bytes;
  const codegen::LaunchConfig streamed = codegen::choose_forward_config(dropped, 90);
  EXPECT_FALSE(streamed.row_in_registers);
  EXPECT_EQ(streamed.threads, 512);
  EXPECT_EQ(streamed.min_blocks_per_sm, 2);
  // Up to a 512-thread block's worth, and rows of narrower slots, keep the plain config.
  NormProblem short_row = problem(NormKind::LayerNorm, 16384, DType::BF16);
  const codegen::LaunchConfig short_plain = codegen::choose_forward_config(short_row, 90);
  short_row.dropout = DropoutMask::Bits;
  EXPECT_EQ(codegen::choose_forward_config(short_row, 90), short_plain);
}

TEST(ForwardConfig, RejectsWhatTheForwardHasNot) {
  const NormProblem p = problem(NormKind::LayerNorm, 4096, DType::BF16);
  codegen::LaunchConfig c = codegen::choose_forward_config(p);
  c.staged = true;
  EXPECT_THROW(codegen::check_forward_config(p, c), std::invalid_argument);
  c = codegen::choose_forward_config(p);
  c.cluster = 3;
  EXPECT_THROW(codegen::check_forward_config(p, c), std::invalid_argument);
  c = codegen::choose_forward_config(problem(NormKind::LayerNorm, 1000, DType::BF16));
  c.cluster = 2;  // a cluster shares one row: not with several rows a block
  EXPECT_THROW(codegen::check_forward_config(problem(NormKind::LayerNorm, 1000, DType::BF16), c),
               std::invalid_argument);
  c = codegen::choose_forward_config(p);
  c.threads = c.threads_per_row = 64;  // 64 elements a thread
  EXPECT_THROW(codegen::check_forward_config(p, c), std::invalid_argument);
  c = codegen::choose_forward_config(p);
  c.row_in_registers = false;
  c.threads_per_row = 32;
  EXPECT_THROW(codegen::check_forward_config(p, c), std::invalid_argument);
  // Prefetch: the next row into registers, so rows held there and option-free only.
  c = codegen::choose_forward_config(p);
  c.prefetch = true;
  EXPECT_NO_THROW(codegen::check_forward_config(p, c));
  c.row_in_registers = false;
  EXPECT_THROW(codegen::check_forward_config(p, c), std::invalid_argument);
  NormProblem residual = p;
  residual.residual = true;
  c = codegen::choose_forward_config(residual);
  c.prefetch = true;
  EXPECT_THROW(codegen::check_forward_config(residual, c), std::invalid_argument);
}

TEST(ForwardSource, HasTheProblemAsConstantsAndOneEntryPoint) {
  NormProblem p = problem(NormKind::LayerNorm, 5003, DType::BF16);
  p.zero_centered_weight = true;
  const std::string s = forward_source(p);
  EXPECT_EQ(s.rfind("// normjit generated kernel: layernorm forward N=5003 x=bf16 y=bf16 weight=fp32", 0), 0u)
      << s.substr(0, 120);
  EXPECT_NE(s.find("constexpr i64 kN = 5003;"), std::string::npos);
  EXPECT_NE(s.find("typedef bf16 TX;"), std::string::npos);
  EXPECT_NE(s.find("typedef float TW;"), std::string::npos);
  EXPECT_NE(s.find("constexpr bool kZeroCenteredWeight = true;"), std::string::npos);
  EXPECT_NE(s.find(std::string("extern \"C\" __global__ void __launch_bounds__(nj::cfg::kThreads, nj::cfg::kMinBlocks)\n") +
                   codegen::KernelSource::kForwardEntry),
            std::string::npos);
  EXPECT_EQ(s.find(codegen::KernelSource::kBackwardEntry), std::string::npos);
  EXPECT_EQ(s.find(codegen::KernelSource::kReduceEntry), std::string::npos);
  EXPECT_EQ(s.find("#include"), std::string::npos);
  EXPECT_NE(codegen::generate_forward_source(p, codegen::choose_forward_config(p)).name.find("_fwd_"),
            std::string::npos);
}

TEST(ForwardSource, SourceAndKeyDifferFromTheBackwards) {
  const codegen::CompileTarget target{90, "13.0"};
  for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm})
    for (int64_t n : {1, 33, 4096, 262144}) {
      const NormProblem p = problem(kind, n, DType::BF16);
      const std::string fwd = forward_source(p);
      const std::string bwd = codegen::generate_backward_source(p, codegen::choose_launch_config(p)).text;
      // The same config too: the template and the entry point still tell them apart.
      const std::string bwd_same_config =
          codegen::generate_backward_source(p, codegen::choose_forward_config(p)).text;
      EXPECT_NE(fwd, bwd);
      EXPECT_NE(codegen::cache_key(fwd, target), codegen::cache_key(bwd, target));
      EXPECT_NE(codegen::cache_key(fwd, target), codegen::cache_key(bwd_same_config, target));
    }
}

// The launch config's fields that change the forward's code change its source (so its key):
// the next row prefetched into registers, copied ahead into shared memory, γ held.
TEST(ForwardSource, KeyDiffersForEveryWayOfBringingTheNextRow) {
  const codegen::CompileTarget target{90, "13.0"};
  const NormProblem p = problem(NormKind::RMSNorm, 65536, DType::BF16);
  codegen::LaunchConfig base = codegen::choose_forward_config(p, 90, 1024, 132);
  base.prefetch = base.shared_weights = false;
  base.shared_prefetch = 0;
  std::set<std::string> keys;
  for (bool prefetch : {false, true})
    for (int ahead : {0, 1})
      for (bool held : {false, true}) {
        if (prefetch && ahead) continue;
        codegen::LaunchConfig c = base;
        c.prefetch = prefetch;
        c.shared_prefetch = ahead;
        c.shared_weights = held;
        ASSERT_NO_THROW(codegen::check_forward_config(p, c)) << codegen::describe(c);
        const std::string source = codegen::generate_forward_source(p, c).text;
        EXPECT_NE(source.find("constexpr int kSharedPrefetch = " + std::to_string(ahead) + ";"), std::string::npos);
        keys.insert(codegen::cache_key(source, target));
      }
  EXPECT_EQ(keys.size(), 6u);
  // Both ways at once, or copied ahead where slots are not whole aligned 16-byte vectors: refused.
  codegen::LaunchConfig both = base;
  both.prefetch = true;
  both.shared_prefetch = 1;
  EXPECT_THROW(codegen::check_forward_config(p, both), std::invalid_argument);
  NormProblem unaligned = p;
  unaligned.alignment = 8;
  unaligned = codegen::resolve_forward_problem(unaligned);
  codegen::LaunchConfig ahead = codegen::choose_forward_config(unaligned, 90, 1024, 132);
  ahead.prefetch = false;
  ahead.shared_prefetch = 1;
  EXPECT_THROW(codegen::check_forward_config(unaligned, ahead), std::invalid_argument);
  // The stage follows the held weights: one 16-byte piece a slot and thread.
  codegen::LaunchConfig held_ahead = base;
  held_ahead.shared_weights = true;
  held_ahead.shared_prefetch = 1;
  codegen::LaunchConfig held = held_ahead;
  held.shared_prefetch = 0;
  EXPECT_EQ(codegen::forward_dynamic_shared_bytes(p, held_ahead) - codegen::forward_dynamic_shared_bytes(p, held),
            size_t(65536 / base.cluster * 2));
}

TEST(ForwardSource, KeyDiffersForEveryForwardField) {
  const codegen::CompileTarget target{90, "13.0"};
  const NormProblem base = problem(NormKind::LayerNorm, 4096, DType::BF16);
  std::vector<NormProblem> variants = {base};
  auto add = [&](void (*edit)(NormProblem&)) {
    NormProblem p = base;
    edit(p);
    variants.push_back(codegen::resolve_forward_problem(p));
  };
  add([](NormProblem& p) { p.n = 4095; });
  add([](NormProblem& p) { p.kind = NormKind::RMSNorm; });
  add([](NormProblem& p) { p.x_dtype = DType::F16; });
  add([](NormProblem& p) { p.weight_dtype = DType::BF16; });
  add([](NormProblem& p) { p.has_weight = false; });
  add([](NormProblem& p) { p.has_bias = false; });
  add([](NormProblem& p) { p.alignment = 4; });
  add([](NormProblem& p) { p.zero_centered_weight = true; });
  std::set<std::string> keys;
  for (const NormProblem& p : variants) keys.insert(codegen::cache_key(forward_source(p), target));
  EXPECT_EQ(keys.size(), variants.size());
}

TEST(ForwardSearchSpace, StartsWithTheHeuristicAndHoldsOnlyRunnableDistinctConfigs) {
  for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm})
    for (DType x : {DType::BF16, DType::F32})
      for (int64_t n : {1, 33, 1000, 4096, 5003, 16384, 65536, 262144, 1048576})
        for (int sm : {80, 90}) {
          NormProblem p = problem(kind, n, x);
          if (n % 2 == 1 && x != DType::F32) p.alignment = 2;
          p = codegen::resolve_forward_problem(p);
          const std::vector<codegen::LaunchConfig> space = codegen::forward_search_space(p, sm);
          const std::string what = codegen::describe_forward(p) + " sm_" + std::to_string(sm);
          ASSERT_FALSE(space.empty()) << what;
          EXPECT_EQ(space.front(), codegen::choose_forward_config(p, sm)) << what;
          EXPECT_LE(space.size(), codegen::kMaxForwardCandidates) << what;
          for (size_t i = 0; i < space.size(); ++i) {
            EXPECT_NO_THROW(codegen::check_forward_config(p, space[i])) << what << ": " << codegen::describe(space[i]);
            if (sm < 90) EXPECT_EQ(space[i].cluster, 1) << what;
            for (size_t j = 0; j < i; ++j) EXPECT_FALSE(space[i] == space[j]) << what << ": a duplicate";
          }
          if (n >= 4096) EXPECT_GE(space.size(), 4u) << what << ": something to choose from";
        }
  // LayerNorm's long rows get cluster candidates on sm_90 too (the heuristic streams them).
  const NormProblem ln = codegen::resolve_forward_problem(problem(NormKind::LayerNorm, 65536, DType::BF16));
  bool cluster = false;
  for (const codegen::LaunchConfig& c : codegen::forward_search_space(ln, 90)) cluster |= c.cluster > 1;
  EXPECT_TRUE(cluster);
}

// Prefetching candidates: option-free rows of a block or a cluster at one or two slots a
// thread, each the same as a candidate before it but for prefetch; none with fused options.
TEST(ForwardSearchSpace, PrefetchesTheNextRowWhereTwoSlotsOrFewerAreHeld) {
  for (int64_t n : {4096, 12288, 16384, 32768, 65536, 131072}) {
    const NormProblem p = codegen::resolve_forward_problem(problem(NormKind::LayerNorm, n, DType::BF16));
    const std::vector<codegen::LaunchConfig> space = codegen::forward_search_space(p, 90);
    int prefetching = 0;
    for (const codegen::LaunchConfig& c : space) {
      if (!c.prefetch || c.shared_weights) continue;  // held weights: HoldsWeightsInSharedMemory...
      ++prefetching;
      EXPECT_TRUE(c.row_in_registers && c.threads_per_row > 32) << codegen::describe(c);
      const int64_t slots = (n / c.vec + c.threads_per_row * c.cluster - 1) / (c.threads_per_row * c.cluster);
      EXPECT_LE(slots, 2) << codegen::describe(c);
      codegen::LaunchConfig plain = c;
      plain.prefetch = false;
      EXPECT_NE(std::find(space.begin(), space.end(), plain), space.end()) << codegen::describe(c);
    }
    EXPECT_GT(prefetching, 0) << n;
    EXPECT_LE(prefetching, static_cast<int>(codegen::kMaxForwardPrefetchCandidates)) << n;
    NormProblem fused = p;
    fused.residual = true;
    for (const codegen::LaunchConfig& c : codegen::forward_search_space(codegen::resolve_forward_problem(fused), 90))
      EXPECT_FALSE(c.prefetch) << n << " " << codegen::describe(c);
  }
}

namespace normjit::codegen {
namespace {

// LayerNorm drawing a dropout mask on 16-bit rows whose target block has a thread count not a
// power of two: the fewest 16-byte slots a thread that make 256-512 threads (exhaustive tuning,
// bench/results/2026-11-25-h100-7713342-fused-{scan,tune2}/); power-of-two blocks, RMSNorm and
// LayerNorm without dropout keep the target.
TEST(ForwardConfig, LayerNormDropoutTakesBlocksOf256To512Threads) {
  auto ln = [](int64_t n, DropoutMask mask, NormKind kind = NormKind::LayerNorm) {
    NormProblem p;
    p.kind = kind;
    p.n = n;
    p.x_dtype = p.dy_dtype = DType::BF16;
    p.weight_dtype = DType::F32;
    p.has_bias = kind == NormKind::LayerNorm;
    p.dropout = mask;
    p.residual = true;
    return resolve_forward_problem(p);
  };
  const std::pair<int64_t, int> expected[] = {{2560, 320}, {3072, 384}, {5120, 320}, {6144, 384}, {7168, 448}};
  for (const auto& [n, threads] : expected)
    for (DropoutMask mask : {DropoutMask::Bits, DropoutMask::Bytes}) {
      const LaunchConfig c = choose_forward_config(ln(n, mask), 90, 65536, 132);
      EXPECT_EQ(c.threads, threads) << n << ": " << describe(c);
      EXPECT_EQ(c.min_blocks_per_sm, 65536 / (threads * 64)) << n;
      EXPECT_TRUE(c.row_in_registers && c.cluster == 1) << n;
    }
  for (int64_t n : {2560, 5120, 7168}) {
    EXPECT_EQ(choose_forward_config(ln(n, DropoutMask::Bits, NormKind::RMSNorm), 90, 65536, 132),
              choose_forward_config(ln(n, DropoutMask::None, NormKind::RMSNorm), 90, 65536, 132))
        << "RMSNorm keeps the target: " << n;
    EXPECT_LT(choose_forward_config(ln(n, DropoutMask::None), 90, 65536, 132).threads, 256)
        << "so does LayerNorm without dropout: " << n;
  }
  for (int64_t n : {1280, 4096, 8192})  // power-of-two blocks at the target
    EXPECT_EQ(choose_forward_config(ln(n, DropoutMask::Bits), 90, 65536, 132),
              choose_forward_config(ln(n, DropoutMask::None), 90, 65536, 132))
        << n;
}

}  // namespace

// As the backward's LaunchConfig.TheHeuristicsConfigRunsEveryOptionAndAffineForm: every N up to
// 20480 and every ~1% beyond to 1.1M (the fused options every 7th N below 20480), at the M the
// tests and the bench use, both kinds, both weight dtypes, each fused option the forward takes,
// sm_80 and sm_90: the heuristic's config passes its own check.
TEST(ForwardConfig, EveryNAndMTakesAConfigItsCheckAccepts) {
  int64_t checked = 0;
  for (int64_t n = 1; n <= 1100000; n = n < 20480 ? n + 1 : n + 1 + n / 97)
    for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm})
      for (DType x : {DType::BF16, DType::F16, DType::F32})
        for (DType weight : {DType::F32, x})
          for (int option = -1; option < static_cast<int>(std::size(kForwardOptions)); ++option) {
            // Fused options at every 7th N below 20480 (their rules are coarser than N's).
            if (option >= 0 && n < 20480 && n % 7 != 0) continue;
            NormProblem p = problem(kind, n, x, weight);
            if (option >= 0) kForwardOptions[option].set(p);
            try {
              codegen::validate_forward_problem(p);
            } catch (const std::exception&) {
              continue;  // an option the forward does not take
            }
            p = codegen::resolve_forward_problem(p);
            for (int64_t m : {int64_t{1}, int64_t{37}, int64_t{199}, 67108864 / n + 1})
              for (int sm : {80, 90}) {
                ++checked;
                EXPECT_NO_THROW(codegen::choose_forward_config(p, sm, m, sm == 90 ? 132 : 108))
                    << codegen::describe(p) << " M=" << m << " sm_" << sm;
              }
            // A memory-rich device's rules (an H200), at many rows, for rows aligned to 16 bytes
            // and to less (session 62's rows copied ahead had reached LN bf16 65001 aligned to 2).
            if (option >= 0 || n % 3 != 0) continue;
            for (int alignment : {16, 8, 2})
            for (int affine = 0; affine < 3; ++affine) {  // γ and β as the problem has them, γ alone, neither
              NormProblem a = p;
              a.alignment = std::min<int>(alignment, p.alignment);
              a.rows_in_phase = alignment == 2;
              if (affine > 0) a.has_bias = false;
              if (affine > 1) a.has_weight = false;
              try {
                a = codegen::resolve_forward_problem(a);
              } catch (const std::exception&) {
                continue;
              }
              ++checked;
              EXPECT_NO_THROW(codegen::choose_forward_config(a, 90, 67108864 / n + 1, 132, 18.4))
                  << codegen::describe(a) << " (memory-rich)";
            }
          }
  EXPECT_GT(checked, 1000000);
  // The memory-rich rules' own edges, each N of a few and each affine form: the multiples of 8192
  // and the N just below them (whose last slot is part-empty), at many rows (RMSNorm's clusters
  // of 8 had held γ that a problem without γ does not have).
  for (int64_t base = 32768; base <= 270336; base += 8192)
    for (int64_t n = base - 9; n <= base + 1; ++n)
      for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm})
        for (DType x : {DType::BF16, DType::F16, DType::F32})
          for (int affine = 0; affine < 4; ++affine)
            for (int alignment : {16, 2}) {
              NormProblem p = problem(kind, n, x, affine == 3 ? x : DType::F32);
              p.has_bias = kind == NormKind::LayerNorm && affine != 1;
              p.has_weight = affine != 2;
              p.alignment = alignment;
              p.rows_in_phase = alignment == 2;
              try {
                p = codegen::resolve_forward_problem(p);
              } catch (const std::exception&) {
                continue;
              }
              for (int64_t m : {int64_t{-1}, int64_t{600}, 67108864 / n + 1})
                EXPECT_NO_THROW(codegen::choose_forward_config(p, 90, m, 132, 18.4))
                    << codegen::describe(p) << " M=" << m << " (memory-rich)";
            }
}

}  // namespace normjit::codegen

// A memory-rich device (an H200, 18.4 bytes an SM cycle): many option-free 16-bit rows of
// 16-byte slots that a block holds take two slots a thread and prefetch the next row (tuned on
// the H200: bench/results/2026-11-28-h200-50783ff-memory-rich-2/), LayerNorm's fp32 γ and β
// held in shared memory (-9756722-held-weights-fused/, -6e696a5-review-fused-ncu/); an H100,
// few rows, fused options, fp32 and scalar slots keep the H100's rules.
TEST(ForwardConfig, MemoryRichDevicesPrefetchTwoSlotsAThread) {
  using codegen::choose_forward_config;
  const std::pair<int64_t, std::string> tuned[] = {
      {5120, "threads=320 threads_per_row=320 vec=8 registers prefetch shared_weights"},
      {7168, "threads=448 threads_per_row=448 vec=8 registers prefetch shared_weights"},
      {8192, "threads=512 threads_per_row=512 vec=8 registers prefetch min_blocks=2 shared_weights"},
      {12288, "threads=768 threads_per_row=768 vec=8 registers prefetch shared_weights"},
      {14336, "threads=896 threads_per_row=896 vec=8 registers prefetch shared_weights"},
  };
  for (const auto& [n, config] : tuned) {
    const NormProblem p = problem(NormKind::LayerNorm, n, DType::BF16);
    EXPECT_EQ(codegen::describe(choose_forward_config(p, 90, 67108864 / n, 132, 18.4)), config) << n;
    EXPECT_EQ(choose_forward_config(p, 90, 67108864 / n, 132, 12.8), choose_forward_config(p, 90, 67108864 / n, 132))
        << n << ": an H100";
    EXPECT_EQ(choose_forward_config(p, 90, 199, 132, 18.4), choose_forward_config(p, 90, 199, 132)) << n << ": few rows";
    EXPECT_EQ(choose_forward_config(p, 80, 67108864 / n, 108, 18.4), choose_forward_config(p, 80, 67108864 / n, 108))
        << n << ": sm_80";
    NormProblem residual = p;
    residual.residual = true;
    residual = codegen::resolve_forward_problem(residual);
    EXPECT_FALSE(choose_forward_config(residual, 90, 67108864 / n, 132, 18.4).prefetch) << n;
    const NormProblem fp32 = problem(NormKind::LayerNorm, n, DType::F32);
    EXPECT_EQ(choose_forward_config(fp32, 90, 67108864 / n, 132, 18.4), choose_forward_config(fp32, 90, 67108864 / n, 132));
    for (int rate : {0, 18}) {
      const codegen::LaunchConfig c = choose_forward_config(p, 90, 67108864 / n, 132, rate);
      EXPECT_NO_THROW(codegen::check_forward_config(p, c)) << n;
      const auto space = codegen::forward_search_space(p, 90, 67108864 / n, 132, rate);
      ASSERT_FALSE(space.empty());
      EXPECT_EQ(space.front(), c) << n << ": the heuristic first";
      EXPECT_NE(std::find(space.begin(), space.end(), choose_forward_config(p, 90, 67108864 / n, 132)), space.end())
          << n << ": the H100 rules' config too";
    }
  }
  // Not where blocks would be of fewer than 320 threads (4096) or fewer than 768 threads an SM
  // (10240: one block of 640), which lost in bench.
  for (int64_t n : {2048, 4096, 9216, 10240, 11264}) {
    const NormProblem p = problem(NormKind::LayerNorm, n, DType::BF16);
    EXPECT_EQ(choose_forward_config(p, 90, 67108864 / n, 132, 18.4), choose_forward_config(p, 90, 67108864 / n, 132)) << n;
  }
  for (int64_t n : {6144, 8192, 13312, 14336, 15360, 16384})
    EXPECT_TRUE(choose_forward_config(problem(NormKind::RMSNorm, n, DType::F16), 90, 67108864 / n, 132, 18.4).prefetch) << n;
  // Held weights: LayerNorm with fp32 γ and β only.
  for (int64_t n : {5120, 6144, 7168, 8192, 12288}) {
    EXPECT_TRUE(choose_forward_config(problem(NormKind::LayerNorm, n, DType::F16), 90, 67108864 / n, 132, 18.4).shared_weights)
        << n;
    EXPECT_FALSE(choose_forward_config(problem(NormKind::RMSNorm, n, DType::BF16), 90, 67108864 / n, 132, 18.4).shared_weights)
        << n;
    const NormProblem same = problem(NormKind::LayerNorm, n, DType::BF16, DType::BF16);
    const codegen::LaunchConfig c = choose_forward_config(same, 90, 67108864 / n, 132, 18.4);
    EXPECT_TRUE(c.prefetch && !c.shared_weights) << n << ": γ in x's dtype, one load a slot";
  }
  // fp32 rows of register clusters: 128 bytes a thread in blocks of at most 512 threads, but
  // LayerNorm's blocks of fewer than 384 (40960), which lost in bench; RMSNorm's hold γ.
  const std::pair<int64_t, std::string> clusters[] = {
      {49152, "threads=384 threads_per_row=384 vec=4 registers cluster=4 min_blocks=2"},
      {65536, "threads=512 threads_per_row=512 vec=4 registers cluster=4 min_blocks=2"},
      {131072, "threads=512 threads_per_row=512 vec=4 registers cluster=8 min_blocks=2"}};
  for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm})
    for (const auto& [n, config] : clusters)
      EXPECT_EQ(codegen::describe(choose_forward_config(problem(kind, n, DType::F32), 90, 67108864 / n, 132, 18.4)),
                config + (kind == NormKind::RMSNorm ? " shared_weights" : ""))
          << n;
  EXPECT_EQ(codegen::describe(choose_forward_config(problem(NormKind::RMSNorm, 40960, DType::F32), 90, 1638, 132, 18.4)),
            "threads=320 threads_per_row=320 vec=4 registers cluster=4 min_blocks=3 shared_weights");
  const NormProblem ln40960 = problem(NormKind::LayerNorm, 40960, DType::F32);
  EXPECT_EQ(choose_forward_config(ln40960, 90, 1638, 132, 18.4), choose_forward_config(ln40960, 90, 1638, 132));
  // Rows aligned to 2 bytes (2-byte slots) out of phase keep theirs (in phase they are phased:
  // OddSixteenBitRowsInPhaseArePhasedOnMemoryRichDevices).
  NormProblem odd = problem(NormKind::LayerNorm, 5003, DType::BF16);
  odd.alignment = 2;
  odd.rows_in_phase = false;
  odd = codegen::resolve_forward_problem(odd);
  EXPECT_EQ(choose_forward_config(odd, 90, 13413, 132, 18.4), choose_forward_config(odd, 90, 13413, 132));
}

// Many option-free 16-bit rows of 32769-262143 columns (LayerNorm: to 98304) on a memory-rich
// device, where the rules before gave LayerNorm streamed blocks of 640-1024 threads and RMSNorm
// clusters of blocks of fewer than 1024 threads: streamed in two 512-thread blocks an SM,
// RMSNorm's rows past 160 KB in clusters of two 1024-thread blocks (session 61, bench
// 1.02-1.34x). Not on an H100, at few rows, with fused options, for fp32 rows, 1024-thread
// clusters or LayerNorm past 98304.
TEST(ForwardConfig, MemoryRichSixteenBitRowsBetweenThePowersOfTwoAreStreamed) {
  using codegen::choose_forward_config;
  struct Case {
    NormKind kind;
    int64_t n;
    int threads, cluster, min_blocks;
  };
  for (const Case& k : {Case{NormKind::LayerNorm, 57344, 512, 1, 2}, Case{NormKind::LayerNorm, 98304, 512, 1, 2},
                        Case{NormKind::RMSNorm, 36864, 512, 1, 2},
                        Case{NormKind::RMSNorm, 77824, 512, 1, 2}, Case{NormKind::RMSNorm, 100352, 1024, 2, 1},
                        Case{NormKind::RMSNorm, 229376, 1024, 2, 1}})
    for (DType x : {DType::BF16, DType::F16})
      for (DType weight : {DType::F32, x}) {
        const NormProblem p = problem(k.kind, k.n, x, weight);
        const int64_t m = 67108864 / k.n;
        const codegen::LaunchConfig c = choose_forward_config(p, 90, m, 132, 18.4);
        const std::string what = codegen::describe_forward(p) + ": " + codegen::describe(c);
        EXPECT_FALSE(c.row_in_registers) << what;
        EXPECT_EQ(c.threads, k.threads) << what;
        EXPECT_EQ(c.cluster, k.cluster) << what;
        EXPECT_EQ(c.min_blocks_per_sm, k.min_blocks) << what;
        EXPECT_FALSE(c == choose_forward_config(p, 90, m, 132)) << what << ": the H100's rules";
        EXPECT_FALSE(c == choose_forward_config(p, 90, 32, 132, 18.4)) << what << ": few rows";
        NormProblem residual = p;
        residual.residual = true;
        residual = codegen::resolve_forward_problem(residual);
        EXPECT_NE(choose_forward_config(residual, 90, m, 132, 18.4).threads, 512) << what << ": fused";
      }
  // Rows the rule leaves: 1024-thread clusters, LayerNorm past 98304, fp32.
  EXPECT_TRUE(choose_forward_config(problem(NormKind::RMSNorm, 131072, DType::BF16), 90, 512, 132, 18.4).row_in_registers);
  for (int64_t n : {114688, 196608, 229376, 327680})
    EXPECT_NE(choose_forward_config(problem(NormKind::LayerNorm, n, DType::BF16), 90, 67108864 / n, 132, 18.4).threads, 512)
        << n;
  EXPECT_TRUE(choose_forward_config(problem(NormKind::RMSNorm, 98304, DType::F32), 90, 682, 132, 18.4).row_in_registers);
}

// Of those, RMSNorm's rows that a cluster of 8 holds at four 16-byte slots a thread in whole
// warps of 192-512 threads (N a multiple of 8192, 49152-131072): held there, γ in shared memory,
// two or three blocks an SM (session 62: bench --forward at M = 64 Mi / N, 1.04-1.24x over the
// streamed rows). Not LayerNorm, not 65536 and 131072 (their clusters of 1024 threads), not
// 40960 or 147456 (160 and 576 threads), not on an H100, at few rows or with fused options.
TEST(ForwardConfig, MemoryRichRmsNormRowsBetweenThePowersOfTwoTakeClustersOfEight) {
  using codegen::choose_forward_config;
  for (DType x : {DType::BF16, DType::F16})
    for (DType weight : {DType::F32, x})
      for (int64_t n = 49152; n < 131072; n += 8192) {
        if (n == 65536) continue;
        const NormProblem p = problem(NormKind::RMSNorm, n, x, weight);
        const int64_t m = 67108864 / n;
        const codegen::LaunchConfig c = choose_forward_config(p, 90, m, 132, 18.4);
        const std::string what = codegen::describe_forward(p) + ": " + codegen::describe(c);
        EXPECT_NO_THROW(codegen::check_forward_config(p, c)) << what;
        EXPECT_TRUE(c.row_in_registers) << what;
        EXPECT_EQ(c.cluster, 8) << what;
        EXPECT_EQ(c.threads, n / 256) << what;
        EXPECT_EQ(c.min_blocks_per_sm, std::min(3, 65536 / (c.threads * 64))) << what;
        EXPECT_TRUE(c.shared_weights) << what;
        EXPECT_FALSE(c.prefetch) << what;
        EXPECT_FALSE(c == choose_forward_config(p, 90, m, 132)) << what << ": the H100's rules";
        EXPECT_FALSE(c == choose_forward_config(p, 90, 32, 132, 18.4)) << what << ": few rows";
        NormProblem residual = p;
        residual.residual = true;
        residual = codegen::resolve_forward_problem(residual);
        EXPECT_FALSE(choose_forward_config(residual, 90, m, 132, 18.4).shared_weights) << what << ": fused";
      }
  for (int64_t n : {40960, 65536, 131072, 139264, 147456, 77824}) {
    const codegen::LaunchConfig c = choose_forward_config(problem(NormKind::RMSNorm, n, DType::BF16), 90, 67108864 / n, 132, 18.4);
    EXPECT_TRUE(c.cluster != 8 || c.threads == 1024) << n << ": " << codegen::describe(c);
  }
  for (int64_t n : {57344, 81920, 98304})
    EXPECT_FALSE(choose_forward_config(problem(NormKind::LayerNorm, n, DType::BF16), 90, 67108864 / n, 132, 18.4).row_in_registers)
        << n;
}

// 16-bit rows held by one 1024-thread block an SM or a cluster of them, on a memory-rich device
// (an H200), many option-free rows: the block or cluster prefetches the next row where each takes
// two rows or more (session 54, bench/results/2026-11-30-h200-odd-occupancy/: RMS 1.17-1.22x, LN
// 1.02-1.07x in bench; 262144 at 256 rows too). The same configs otherwise; not RMSNorm's
// clusters of 640-768 threads (0.86-0.97x), not on an H100, at fewer rows, with fused options or
// for fp32 rows; streamed rows are not clusters. LayerNorm's clusters with fp32 γ hold γ (and β
// where both fit) in shared memory instead (session 61: 1.02-1.07x in tune). Since session 62
// the clusters copy the next row ahead into shared memory with γ held (1.01-1.10x in bench at
// M = 64 Mi / N) where γ is fp32, and LayerNorm's clusters of 8 with 16-bit γ; the rest keep
// the prefetch.
TEST(ForwardConfig, MemoryRichSixteenBitClustersPrefetchTheNextRow) {
  using codegen::choose_forward_config;
  int prefetching = 0, holding = 0, copying = 0;
  for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm})
    for (DType x : {DType::BF16, DType::F16})
      for (DType weight : {DType::F32, x})
        for (int64_t n : {65536, 131072, 262144}) {
          const NormProblem p = problem(kind, n, x, weight);
          const int64_t m = 67108864 / n;
          const codegen::LaunchConfig rich = choose_forward_config(p, 90, m, 132, 18.4);
          codegen::LaunchConfig h100 = choose_forward_config(p, 90, m, 132);
          const std::string what = codegen::describe_forward(p) + ": " + codegen::describe(rich);
          EXPECT_NO_THROW(codegen::check_forward_config(p, rich)) << what;
          EXPECT_FALSE(h100.prefetch) << what << ": the H100's rules";
          // Since session 62 the next row is copied ahead into shared memory, γ held there, but
          // for LayerNorm's 16-bit γ at 65536 and 131072.
          const bool long_cluster = rich.cluster > 1 && rich.threads == 1024;
          const bool copies_ahead =
              long_cluster && (weight == DType::F32 || (kind == NormKind::LayerNorm && n == 262144));
          EXPECT_EQ(rich.prefetch, long_cluster && !copies_ahead) << what;
          EXPECT_EQ(rich.shared_prefetch, copies_ahead ? 1 : 0) << what;
          EXPECT_EQ(rich.shared_weights, copies_ahead) << what;
          if (rich.shared_weights && kind == NormKind::LayerNorm)
            EXPECT_FALSE(codegen::forward_holds_bias(p, rich)) << what << ": γ alone fits";
          prefetching += rich.prefetch;
          holding += rich.shared_weights;
          copying += rich.shared_prefetch;
          h100.prefetch = rich.prefetch;
          h100.shared_weights = rich.shared_weights;
          h100.shared_prefetch = rich.shared_prefetch;
          EXPECT_EQ(rich, h100) << what << ": the clusters are the H100 rules' but for prefetch";
          EXPECT_FALSE(choose_forward_config(p, 90, 32, 132, 18.4).prefetch) << what << ": a row or less a cluster";
          NormProblem residual = p;
          residual.residual = true;
          residual = codegen::resolve_forward_problem(residual);
          EXPECT_FALSE(choose_forward_config(residual, 90, m, 132, 18.4).prefetch) << what << ": fused";
        }
  // Clusters of 1024-thread blocks at 65536, 131072 and 262144 (between those, rows are
  // streamed: MemoryRichSixteenBitRowsBetweenThePowersOfTwoAreStreamed).
  EXPECT_EQ(prefetching, 2 * 2 + 2 * 3);
  EXPECT_EQ(holding, 2 * 4 * 3 - 2 * 2 - 2 * 3);
  EXPECT_EQ(copying, holding);
  // One block of 1024 threads, four slots a thread (32768).
  for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm}) {
    const NormProblem p = problem(kind, 32768, DType::BF16);
    const codegen::LaunchConfig c = choose_forward_config(p, 90, 2048, 132, 18.4);
    EXPECT_TRUE(c.prefetch && c.cluster == 1 && c.threads == 1024) << codegen::describe(c);
    EXPECT_FALSE(choose_forward_config(p, 90, 2048, 132).prefetch) << "the H100's rules";
    EXPECT_FALSE(choose_forward_config(p, 90, 256, 132, 18.4).prefetch) << "256 rows: fewer than two a block";
    EXPECT_EQ(choose_forward_config(problem(kind, 32000, DType::BF16), 90, 2097, 132, 18.4),
              choose_forward_config(problem(kind, 32000, DType::BF16), 90, 2097, 132))
        << "32000: threads of 3 and 4 slots (0.94-1.00x prefetching)";
  }
  const NormProblem fp32 = problem(NormKind::RMSNorm, 65536, DType::F32);
  EXPECT_FALSE(choose_forward_config(fp32, 90, 1024, 132, 18.4).prefetch) << "fp32";
}

// γ and β held in shared memory (shared_weights): tuner candidates only, where a slot's γ spans
// two 16-byte loads (fp32 γ of 8-element slots); the check says where they cannot run.
TEST(ForwardSearchSpace, HoldsWeightsInSharedMemoryWhereASlotsGammaSpansTwoLoads) {
  const NormProblem ln = problem(NormKind::LayerNorm, 7168, DType::BF16);  // fp32 γ and β
  const auto space = codegen::forward_search_space(ln, 90, 9362, 132, 18.4);
  EXPECT_LE(space.size(), codegen::kMaxForwardCandidates);
  int held = 0;
  for (const codegen::LaunchConfig& c : space) {
    if (!c.shared_weights) continue;
    ++held;
    EXPECT_TRUE(c.row_in_registers && c.rows_per_block() == 1) << codegen::describe(c);
    const int64_t iters = codegen::ceil_div(codegen::ceil_div(ln.n, c.vec), int64_t{c.threads_per_row} * c.cluster);
    EXPECT_EQ(codegen::forward_dynamic_shared_bytes(ln, c), size_t(2 * iters * c.vec * c.threads_per_row * 4));
    codegen::LaunchConfig from_l1 = c;
    from_l1.shared_weights = false;
    EXPECT_NE(std::find(space.begin(), space.end(), from_l1), space.end()) << "the same block without them first";
  }
  EXPECT_GE(held, 4);
  EXPECT_TRUE(space.front().shared_weights) << "the heuristic's on an H200, beside the candidates' own";
  // The heuristic's own config is a candidate both ways: from L1 where the H200's rule holds
  // them, and held where the H100's does not (first of the held ones: the limit had cut it at
  // 12288-14336; at 8192 and 16384 its blocks an SM would not fit theirs).
  for (const auto& [rate, sizes] : {std::pair{18.4, std::vector<int64_t>{8192, 12288, 14336, 16384}},
                                    std::pair{0.0, std::vector<int64_t>{12288, 14336}}})
    for (int64_t n : sizes) {
      const NormProblem wide = problem(NormKind::LayerNorm, n, DType::BF16);
      const auto wide_space = codegen::forward_search_space(wide, 90, 67108864 / n, 132, rate);
      codegen::LaunchConfig other = wide_space.front();
      EXPECT_EQ(other.shared_weights, rate > 0) << n << ": the H200's rule holds them";
      other.shared_weights = !other.shared_weights;
      EXPECT_NE(std::find(wide_space.begin(), wide_space.end(), other), wide_space.end()) << n << " " << rate;
    }
  EXPECT_LE(held, 1 + static_cast<int>(codegen::kMaxForwardHeldWeightCandidates));
  EXPECT_FALSE(codegen::choose_forward_config(ln, 90, 9362, 132).shared_weights) << "not the H100 rules'";
  // Not where a slot's γ is one load: γ in x's dtype, fp32 rows.
  for (const NormProblem& p : {problem(NormKind::LayerNorm, 7168, DType::BF16, DType::BF16), problem(NormKind::LayerNorm, 7168, DType::F32)})
    for (const codegen::LaunchConfig& c : codegen::forward_search_space(p, 90, 9362, 132, 18.4))
      EXPECT_FALSE(c.shared_weights) << codegen::describe_forward(p) << " " << codegen::describe(c);
  // The check: rows in registers, one a block, option-free, with γ or β.
  codegen::LaunchConfig c = codegen::choose_forward_config(ln, 90, 9362, 132);
  c.shared_weights = true;
  EXPECT_NO_THROW(codegen::check_forward_config(ln, c));
  EXPECT_EQ(codegen::forward_dynamic_shared_bytes(ln, c), size_t(7168 * 8));
  NormProblem residual = ln;
  residual.residual = true;
  residual = codegen::resolve_forward_problem(residual);
  EXPECT_THROW(codegen::check_forward_config(residual, c), std::invalid_argument);
  NormProblem plain = ln;
  plain.has_weight = plain.has_bias = false;
  plain = codegen::resolve_forward_problem(plain);
  EXPECT_THROW(codegen::check_forward_config(plain, c), std::invalid_argument);
  codegen::LaunchConfig streamed = codegen::choose_forward_config(problem(NormKind::LayerNorm, 1048576, DType::BF16), 90);
  ASSERT_FALSE(streamed.row_in_registers);
  streamed.shared_weights = true;
  EXPECT_THROW(codegen::check_forward_config(problem(NormKind::LayerNorm, 1048576, DType::BF16), streamed),
               std::invalid_argument);
  codegen::LaunchConfig rows = codegen::choose_forward_config(problem(NormKind::LayerNorm, 256, DType::BF16), 90);
  ASSERT_GT(rows.rows_per_block(), 1);
  rows.shared_weights = true;
  EXPECT_THROW(codegen::check_forward_config(problem(NormKind::LayerNorm, 256, DType::BF16), rows), std::invalid_argument);
}

// Rows shorter than a 16-byte chunk (16-bit N < 8) share the tensor's last chunk with the rows
// before them, whose whole-chunk loads would read past the tensor (memcheck found it at RMS bf16
// N = 3): not phased, by the check, the rule or the tuner.
TEST(ForwardConfig, RowsShorterThanAChunkAreNeverPhased) {
  for (int64_t n : {int64_t{1}, int64_t{3}, int64_t{7}, int64_t{8}, int64_t{9}}) {
    NormProblem p = problem(NormKind::RMSNorm, n, DType::BF16);
    p.alignment = 2;
    p = codegen::resolve_forward_problem(p);
    ASSERT_TRUE(p.rows_in_phase);
    codegen::LaunchConfig c;
    c.vec = 8;
    c.threads = c.threads_per_row = 64;
    c.phased = true;
    if (n < 8) {
      EXPECT_THROW(codegen::check_forward_config(p, c), std::invalid_argument) << n;
      for (const codegen::LaunchConfig& candidate : codegen::forward_search_space(p, 90, 4096, 132, 18.4))
        EXPECT_FALSE(candidate.phased) << n << ": " << codegen::describe(candidate);
    } else {
      EXPECT_NO_THROW(codegen::check_forward_config(p, c)) << n;
    }
    EXPECT_FALSE(codegen::choose_forward_config(p, 90, 16384, 132, 18.4).phased) << n << ": below the rule's 1000";
  }
}

// Phased rows (templates/norm_forward.cuh, kPhased): odd 16-bit rows in phase read as aligned
// 16-byte chunks, a row a block or a cluster in registers, γ and β not held; the register bound
// counts the span (N + 7), the source says kPhased, and nothing else runs phased.
TEST(ForwardConfig, PhasedRowsAreCheckedAndGenerated) {
  auto odd = [](NormKind kind, int64_t n, DType x = DType::BF16) {
    NormProblem p = problem(kind, n, x);
    p.alignment = x == DType::F32 ? 4 : 2;
    return codegen::resolve_forward_problem(p);
  };
  for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm})
    for (int64_t n : {1001, 5003, 12289, 30001, 40001}) {
      const NormProblem p = odd(kind, n);
      // 16-byte slots of the span, 4 a thread, in one block of at most 1024 threads or a cluster.
      codegen::LaunchConfig c;
      c.vec = 8;
      c.cluster = n > 32000 ? 2 : 1;
      const int64_t lanes = codegen::ceil_div(codegen::ceil_div(n + 7, int64_t{8}), int64_t{4} * c.cluster);
      c.threads = c.threads_per_row = static_cast<int>(std::max<int64_t>(64, codegen::round_up(lanes, 32)));
      c.phased = true;
      ASSERT_NO_THROW(codegen::check_forward_config(p, c)) << n << " " << codegen::describe(c);
      const std::string src = codegen::generate_forward_source(p, c).text;
      EXPECT_NE(src.find("constexpr bool kPhased = true;"), std::string::npos);
      EXPECT_EQ(src.find("#define NJ_REALIGNED_SLOTS 1"), std::string::npos) << "phased slots are aligned chunks";
      codegen::LaunchConfig unphased = c;
      unphased.phased = false;
      EXPECT_NE(codegen::cache_key(src, {90, "13.0"}),
                codegen::cache_key(codegen::generate_forward_source(p, unphased).text, {90, "13.0"}));

      auto rejects = [&](const NormProblem& q, const codegen::LaunchConfig& bad, const char* why) {
        EXPECT_THROW(codegen::check_forward_config(q, bad), std::invalid_argument) << n << ": " << why;
      };
      NormProblem apart = p;
      apart.rows_in_phase = false;
      rejects(apart, c, "rows out of phase");
      NormProblem aligned = p;
      aligned.alignment = 16;
      rejects(aligned, c, "aligned rows have no phase");
      rejects(odd(kind, n, DType::F32), c, "fp32 rows");
      NormProblem fused = p;
      fused.residual = true;
      rejects(codegen::resolve_forward_problem(fused), c, "a fused option");
      codegen::LaunchConfig held = c;  // γ and β held at the block's phase, where they fit
      held.shared_weights = true;
      if (codegen::forward_dynamic_shared_bytes(p, held) <= codegen::max_stage_bytes(90)) {
        EXPECT_NO_THROW(codegen::check_forward_config(p, held)) << n;
        EXPECT_EQ(codegen::phased_forward_config(p, unphased, 90), held) << n << ": they fit, so they are held";
        EXPECT_NE(codegen::generate_forward_source(p, held).text.find("constexpr bool kSharedWeights = true;"),
                  std::string::npos);
      } else {
        rejects(p, held, "held weights that do not fit");
        EXPECT_EQ(codegen::phased_forward_config(p, unphased, 90), c) << n << ": they do not fit";
      }
      codegen::LaunchConfig narrow = c;
      narrow.vec = 4;
      rejects(p, narrow, "8-byte slots");
      codegen::LaunchConfig streamed = c;
      streamed.row_in_registers = false;
      streamed.prefetch = false;
      rejects(p, streamed, "streamed rows");
    }
  // Several rows a block are not phased.
  const NormProblem short_rows = odd(NormKind::RMSNorm, 101);
  codegen::LaunchConfig rows = codegen::choose_forward_config(short_rows, 90);
  rows.vec = 8;
  rows.phased = true;
  EXPECT_GT(rows.rows_per_block(), 1);
  EXPECT_THROW(codegen::check_forward_config(short_rows, rows), std::invalid_argument);
  // The register bound counts the span: 32767 bf16 elements are 4096 slots, 4 a thread of a
  // 1024-thread block (64 bytes); their span of 32774 columns is 4097 slots, 5 a thread.
  const NormProblem edge = odd(NormKind::LayerNorm, 32767);
  codegen::LaunchConfig block;
  block.vec = 8;
  block.threads = block.threads_per_row = 1024;
  block.phased = true;
  EXPECT_THROW(codegen::check_forward_config(edge, block), std::invalid_argument);
  block.phased = false;
  EXPECT_NO_THROW(codegen::check_forward_config(edge, block));
  // Tuning keys tell rows out of phase apart.
  NormProblem apart = edge;
  apart.rows_in_phase = false;
  EXPECT_NE(codegen::describe_forward(apart).find(" out-of-phase"), std::string::npos);
  EXPECT_EQ(codegen::describe_forward(edge).find("out-of-phase"), std::string::npos);
}

// Rows that can be phased also try their aligned twin's candidates as phased ones, at most
// kMaxForwardPhasedCandidates of them besides prefetching variants, γ and β held where they
// fit; rows out of phase, fp32 rows and fused options none.
TEST(ForwardSearchSpace, RowsInPhaseAlsoTryPhasedConfigs) {
  for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm})
    for (int64_t n : {1001, 4095, 5003, 8191, 12289, 30001})
      for (DType x : {DType::BF16, DType::F16, DType::F32}) {
        NormProblem p = problem(kind, n, x);
        p.alignment = x == DType::F32 ? 4 : 2;
        p = codegen::resolve_forward_problem(p);
        const std::string what = codegen::describe_forward(p);
        int phased = 0, plain_phased = 0, held = 0;
        for (const codegen::LaunchConfig& c : codegen::forward_search_space(p, 90, 16384, 132, 18.4)) {
          if (!c.phased) continue;
          ++phased;
          plain_phased += !c.prefetch;
          held += c.shared_weights;
          EXPECT_NO_THROW(codegen::check_forward_config(p, c)) << what << " " << codegen::describe(c);
          EXPECT_TRUE(c.row_in_registers && c.rows_per_block() == 1) << codegen::describe(c);
        }
        if (x != DType::F32) EXPECT_GE(held, 1) << what << ": γ and β held at the block's phase";
        if (x == DType::F32) {
          EXPECT_EQ(phased, 0) << what;
          continue;
        }
        EXPECT_GE(phased, 2) << what;
        EXPECT_LE(phased, static_cast<int>(codegen::kMaxForwardPhasedCandidates + codegen::kMaxForwardPrefetchCandidates))
            << what;
        EXPECT_GE(plain_phased, 1) << what;
        NormProblem apart = p;
        apart.rows_in_phase = false;
        for (const codegen::LaunchConfig& c : codegen::forward_search_space(apart, 90, 16384, 132, 18.4))
          EXPECT_FALSE(c.phased) << what << " out of phase: " << codegen::describe(c);
        NormProblem fused = p;
        fused.residual = true;
        for (const codegen::LaunchConfig& c :
             codegen::forward_search_space(codegen::resolve_forward_problem(fused), 90, 16384, 132, 18.4))
          EXPECT_FALSE(c.phased) << what << " with a residual: " << codegen::describe(c);
      }
}

// The phased rule (choose_forward_config on a memory-rich sm_90 at many rows), LayerNorm's and
// RMSNorm's alike: one block of four 16-byte slots a thread (two where that makes 256-512 threads
// of fewer than 256), γ and β held, blocks an SM as registers and shared memory allow;
// prefetching blocks up to 544 threads, at two slots a thread where those are up to 544 threads
// (else four, unbound); LayerNorm's where two-slot prefetching blocks would pass 448 threads
// and four slots make at most 320, four slots without prefetch. Rows out of phase, few rows, the
// H100's rules, fp32 rows, rows whose γ and β one block cannot hold (LayerNorm 30001) and rows
// past 1024 threads of four slots keep their own rules.
TEST(ForwardConfig, OddSixteenBitRowsInPhaseArePhasedOnMemoryRichDevices) {
  enum Kinds { kBoth, kRmsOnly, kLayerNormOnly };
  struct Expected { int64_t n; int threads; int min_blocks; bool prefetch; Kinds kinds = kBoth; };
  const Expected expected[] = {{1001, 64, 16, true},   {2001, 128, 8, true},  {3001, 192, 5, true},
                               {4095, 288, 3, true},   {5003, 320, 3, true},  {6001, 384, 2, true},
                               {7001, 448, 2, true},   {8191, 544, 1, true, kRmsOnly},
                               {7163, 256, 3, false, kLayerNormOnly},     {8191, 288, 3, false, kLayerNormOnly},
                               {10233, 320, 2, false, kLayerNormOnly},    {10240, 352, 1, true},
                               {12289, 416, 1, true}, {16385, 544, 1, true},
                               {20001, 640, 1, false}, {30001, 960, 1, false, kRmsOnly}};
  for (const Expected& e : expected)
    for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm})
    for (DType x : {DType::BF16, DType::F16}) {
      NormProblem p = problem(kind, e.n, x);
      p.alignment = 2;
      p = codegen::resolve_forward_problem(p);
      if ((kind == NormKind::LayerNorm && e.kinds == kRmsOnly) || (kind == NormKind::RMSNorm && e.kinds == kLayerNormOnly))
        continue;
      const codegen::LaunchConfig c = codegen::choose_forward_config(p, 90, 16384, 132, 18.4);
      const std::string what = codegen::describe_forward(p) + ": " + codegen::describe(c);
      EXPECT_TRUE(c.phased && c.shared_weights && c.cluster == 1 && c.vec == 8) << what;
      EXPECT_EQ(c.threads, e.threads) << what;
      EXPECT_EQ(c.min_blocks_per_sm, e.min_blocks) << what;
      EXPECT_EQ(c.prefetch, e.prefetch) << what;
      EXPECT_LE(c.min_blocks_per_sm * codegen::forward_dynamic_shared_bytes(p, c), codegen::max_shared_per_sm(90)) << what;
      EXPECT_FALSE(codegen::choose_forward_config(p, 90, 64, 132, 18.4).phased) << what << ": few rows";
      EXPECT_FALSE(codegen::choose_forward_config(p, 90, 16384, 132).phased) << what << ": the H100's rules";
      NormProblem apart = p;
      apart.rows_in_phase = false;
      EXPECT_FALSE(codegen::choose_forward_config(apart, 90, 16384, 132, 18.4).phased) << what << ": out of phase";
    }
  NormProblem wide_span = problem(NormKind::LayerNorm, 30001, DType::BF16);  // γ and β too long for one block
  wide_span.alignment = 2;
  EXPECT_FALSE(codegen::choose_forward_config(codegen::resolve_forward_problem(wide_span), 90, 16384, 132, 18.4).phased);
  // Rows shorter than 1000 keep their warps of several rows.
  for (int64_t n : {1, 33, 321, 999}) {
    NormProblem p = problem(NormKind::RMSNorm, n, DType::BF16);
    p.alignment = 2;
    EXPECT_FALSE(codegen::choose_forward_config(codegen::resolve_forward_problem(p), 90, 16384, 132, 18.4).phased) << n;
  }
  NormProblem wide = problem(NormKind::RMSNorm, 5003, DType::F32);
  wide.alignment = 4;
  EXPECT_FALSE(codegen::choose_forward_config(codegen::resolve_forward_problem(wide), 90, 16384, 132, 18.4).phased);
  // Past one block's four slots a thread (32761 elements), the rules of the alignment.
  NormProblem longer = problem(NormKind::RMSNorm, 32763, DType::BF16);
  longer.alignment = 2;
  EXPECT_FALSE(codegen::choose_forward_config(codegen::resolve_forward_problem(longer), 90, 16384, 132, 18.4).phased);
}

// check_config checks a config by the pass it is for: the forward's held weights (no shared
// sums) are the forward's only (tune --forward --config checked them by the backward's rules).
TEST(ForwardConfig, CheckConfigChecksByPass) {
  const NormProblem p = problem(NormKind::LayerNorm, 7168, DType::BF16);
  const codegen::LaunchConfig c = codegen::choose_forward_config(p, 90, 9362, 132, 18.4);
  ASSERT_TRUE(c.shared_weights && !c.shared_sums) << codegen::describe(c);
  EXPECT_NO_THROW(codegen::check_config(p, c, codegen::Pass::Forward));
  EXPECT_THROW(codegen::check_config(p, c, codegen::Pass::Backward), std::invalid_argument);
}

// On a memory-rich device, fp32 rows past the wide blocks (RMSNorm beyond 196608 columns,
// LayerNorm beyond 163840) up to 262144 take a cluster of 8 blocks of 1024 threads, at most 128
// bytes a thread, one block an SM, γ held in shared memory, at many rows (m's bucket 128 up, or
// m not known); longer rows, and the H100's rules, stream.
TEST(ForwardConfig, MemoryRichFp32RowsPastTheWideBlocksTakeClustersOfEightWithGammaHeld) {
  for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm}) {
    const int64_t first = kind == NormKind::LayerNorm ? 163844 : 196612;
    for (int64_t n = first; n <= 262144; n += 4096 + 4) {
      for (int64_t m : {int64_t{65}, int64_t{256}, 67108864 / n, int64_t{-1}}) {
        const NormProblem p = problem(kind, n, DType::F32);
        const codegen::LaunchConfig c = codegen::choose_forward_config(p, 90, m, 132, 18.4);
        const std::string what = codegen::describe_forward(p) + " m=" + std::to_string(m) + ": " + codegen::describe(c);
        EXPECT_TRUE(c.row_in_registers && c.shared_weights) << what;
        EXPECT_EQ(c.cluster, 8) << what;
        EXPECT_EQ(c.threads, 1024) << what;
        EXPECT_EQ(c.min_blocks_per_sm, 1) << what;
        EXPECT_LE(codegen::elements_per_thread(p, c) * 4, 128) << what;
        EXPECT_NO_THROW(codegen::check_forward_config(p, c)) << what;
        EXPECT_FALSE(codegen::choose_forward_config(p, 90, m, 132).row_in_registers) << what << ": the H100's rules stream";
      }
    }
    EXPECT_FALSE(codegen::choose_forward_config(problem(kind, 262148, DType::F32), 90, 256, 132, 18.4).row_in_registers);
  }
  // The wide blocks' own rows keep them (LayerNorm 163840 in 640 threads, RMSNorm 196608 in 768).
  EXPECT_FALSE(codegen::choose_forward_config(problem(NormKind::LayerNorm, 163840, DType::F32), 90, 409, 132, 18.4).shared_weights);
  EXPECT_EQ(codegen::choose_forward_config(problem(NormKind::RMSNorm, 196608, DType::F32), 90, 341, 132, 18.4).threads, 768);
}

// Below 128 rows, those clusters by the waves of clusters of 8 that m's bucket makes on 132
// SMs (16 clusters a wave): one wave (m <= 16) both norms; two (17-32 rows) LayerNorm only;
// four (33-64 rows) RMSNorm, and LayerNorm past 229376 columns. The rest stream, as every m
// does on the H100's rules.
TEST(ForwardConfig, MemoryRichLongFp32RowsTakeTheirClustersByWavesOfClusters) {
  for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm}) {
    const bool layer_norm = kind == NormKind::LayerNorm;
    for (int64_t n : {int64_t{167936}, int64_t{200704}, int64_t{229376}, int64_t{229380}, int64_t{262144}}) {
      if (!layer_norm && n < 196612) continue;
      const NormProblem p = problem(kind, n, DType::F32);
      for (int64_t m : {1, 2, 9, 16, 17, 24, 32, 33, 48, 64, 65}) {
        const bool expected = m <= 16 || m > 64 || (m <= 32 ? layer_norm : !layer_norm || n > 229376);
        const codegen::LaunchConfig c = codegen::choose_forward_config(p, 90, m, 132, 18.4);
        const std::string what = codegen::describe_forward(p) + " m=" + std::to_string(m) + ": " + codegen::describe(c);
        EXPECT_EQ(c.row_in_registers, expected) << what;
        if (expected) EXPECT_TRUE(c.cluster == 8 && c.threads == 1024 && c.shared_weights) << what;
        EXPECT_FALSE(codegen::choose_forward_config(p, 90, m, 132).row_in_registers) << what << ": the H100's rules stream";
      }
    }
  }
  // RMSNorm's 4-byte slots (rows aligned to 4 bytes) keep the exact width from bucket 128 and
  // stream below it (their 1024-thread blocks spill); LayerNorm's take the clusters of 1024.
  for (int64_t n : {int64_t{200003}, int64_t{250001}}) {
    NormProblem rms = problem(NormKind::RMSNorm, n, DType::F32), ln = problem(NormKind::LayerNorm, n, DType::F32);
    rms.alignment = ln.alignment = 4;
    for (int64_t m : {1, 16, 40, 64, 65, 300}) {
      const codegen::LaunchConfig r = codegen::choose_forward_config(rms, 90, m, 132, 18.4);
      const codegen::LaunchConfig l = codegen::choose_forward_config(ln, 90, m, 132, 18.4);
      const std::string what = std::to_string(n) + " m=" + std::to_string(m) + ": " + codegen::describe(r) + " / " + codegen::describe(l);
      EXPECT_EQ(r.vec, 1) << what;
      EXPECT_EQ(r.row_in_registers, m > 64) << what;
      if (m > 64) EXPECT_EQ(r.threads, ((n + 255) / 256 + 31) & ~int64_t{31}) << what;  // 8 blocks of 32 slots a thread
      EXPECT_EQ(l.row_in_registers && l.threads == 1024, m <= 16 || m > 64 || n > 229376) << what;
    }
  }
}

// On a memory-rich device, LayerNorm's warp rows of 16-bit x of two or four passes, the last
// part-empty, are bound to 64 registers a thread (four 256-thread blocks an SM); three or five
// passes, whole passes, RMSNorm, fp32 and the H100's rules stay unbounded.
TEST(ForwardConfig, MemoryRichLayerNormWarpRowsWithAPartEmptyLastPassTakeSixtyFourRegisters) {
  for (DType x : {DType::BF16, DType::F16}) {
    for (int64_t n : {392, 456, 904, 1000, 1016}) {
      const NormProblem p = problem(NormKind::LayerNorm, n, x);
      const codegen::LaunchConfig c = codegen::choose_forward_config(p, 90, 67108864 / n, 132, 18.4);
      EXPECT_EQ(c.threads_per_row, 32) << n << ": " << codegen::describe(c);
      EXPECT_EQ(c.min_blocks_per_sm, 4) << n << ": " << codegen::describe(c);
      EXPECT_EQ(codegen::choose_forward_config(p, 90, 67108864 / n, 132).min_blocks_per_sm, 1) << n;
      EXPECT_EQ(codegen::choose_forward_config(problem(NormKind::RMSNorm, n, x), 90, 67108864 / n, 132, 18.4).min_blocks_per_sm, 1)
          << n;
    }
    for (int64_t n : {264, 512, 600, 744, 768, 1024})
      EXPECT_EQ(codegen::choose_forward_config(problem(NormKind::LayerNorm, n, x), 90, 67108864 / n, 132, 18.4).min_blocks_per_sm, 1)
          << n;
  }
  EXPECT_EQ(codegen::choose_forward_config(problem(NormKind::LayerNorm, 1000, DType::F32), 90, 67108, 132, 18.4).min_blocks_per_sm, 1);
}
