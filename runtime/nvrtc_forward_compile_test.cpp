// The forward compiles to a cubin for sm_80 and sm_90 in every family (several rows a block, a
// warp a row, a row a block in registers, streamed rows), for odd and even N, every x dtype,
// LayerNorm and RMSNorm, both weight dtypes and every affine form: NVRTC runs on the CPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <set>
#include <vector>

#include "codegen/cache_key.h"
#include "codegen/forward_config.h"
#include "codegen/kernel_source.h"
#include "codegen/norm_problem.h"
#include "normjit/normjit.hpp"
#include "runtime/nvrtc.h"
#include "support/phased_forward_block.h"
#include "support/ptxas_report.h"
#include "support/problem_variants.h"

using namespace normjit;

namespace {

// 14336: a row block of 448 threads (min_blocks keeps its registers down); 32768: 1024 threads.
const int64_t kForwardNs[] = {1, 33, 1000, 4096, 5003, 14336, 32768, 65536, 262144};

// γ and β present or not, and γ zero-centred: cycled over the shapes so each appears in each family.
struct Affine { bool weight, bias, zero_centered; };
const Affine kAffine[] = {{true, true, false}, {false, false, false}, {true, false, true}, {false, true, false}};

// Bytes ptxas spills (stores) compiling the forward of p in config c for sm_90.
int sm90_spill_bytes(const runtime::Nvrtc& nvrtc, const NormProblem& p, const codegen::LaunchConfig& c) {
  const codegen::KernelSource src = codegen::generate_forward_source(p, c);
  const runtime::CompileOutput out =
      nvrtc.compile(src.text, src.name, codegen::compile_options({90, nvrtc.version()}), codegen::describe_forward(p));
  int bytes = 0;
  for (const auto& r : test::ptxas_report(out)) bytes += r.spill_stores;
  return bytes;
}

void compile_or_fail(const runtime::Nvrtc& nvrtc, const NormProblem& p, int sm, std::set<std::string>* families,
                     int64_t m = -1) {
  const codegen::LaunchConfig c = codegen::choose_forward_config(p, sm, m);
  families->insert(c.row_in_registers ? (c.threads_per_row < 32    ? "rows"
                                         : c.threads_per_row == 32 ? "warp"
                                                                   : "block")
                                      : (c.cluster > 1 ? "streamed cluster" : "streamed"));
  const codegen::KernelSource src = codegen::generate_forward_source(p, c);
  runtime::CompileOutput out;
  ASSERT_NO_THROW(out = nvrtc.compile(src.text, src.name, codegen::compile_options({sm, nvrtc.version()}),
                                      codegen::describe_forward(p)))
      << codegen::describe_forward(p) << " sm_" << sm << " " << codegen::describe(c);
  EXPECT_GT(out.cubin.size(), 1000u);
  // No spills, but LayerNorm's fp32 cluster blocks at 64 registers: 16 bytes, and still the
  // fastest config tuning found at N = 65536 (bench/NOTES.md, entry 20); and streamed rows of
  // realigned slots (two chunks a slot of a batch): up to 272 bytes, still 1.3-2.5x faster than
  // an element a thread a pass at 32769-1048577 (entry 34).
  const int allowed = codegen::realigned_slots(p, c) && !c.row_in_registers ? 288
                      : p.kind == NormKind::LayerNorm && c.cluster > 1 ? 16
                                                                        : 0;
  for (const auto& r : test::ptxas_report(out))
    EXPECT_LE(r.spill_stores, allowed) << codegen::describe_forward(p) << " " << codegen::describe(c) << " sm_" << sm
                                       << " spills";
}

}  // namespace

TEST(NvrtcForward, EveryFamilyCompilesForSm80AndSm90) {
  std::string why;
  if (!runtime::Nvrtc::available(&why)) GTEST_SKIP() << "no NVRTC: " << why;
  const runtime::Nvrtc& nvrtc = runtime::Nvrtc::get();
  std::set<std::string> families;
  int shape = 0;
  for (int sm : {80, 90})
    for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm})
      for (DType x : {DType::F32, DType::F16, DType::BF16})
        for (int64_t n : kForwardNs) {
          // The heuristic does not depend on the arch, so sm_80 compiles sm_90's sources: only
          // bf16 there, whose conversions are the arch-dependent code.
          if (sm == 80 && x != DType::BF16) continue;
          const Affine a = kAffine[shape % std::size(kAffine)];
          NormProblem p;
          p.kind = kind;
          p.n = n;
          p.x_dtype = x;
          p.weight_dtype = shape % 2 == 0 ? DType::F32 : x;  // fp32 γ/β, or x's dtype
          p.has_weight = a.weight;
          p.has_bias = a.bias && kind == NormKind::LayerNorm;
          p.zero_centered_weight = a.zero_centered;
          // Odd rows of 16-bit x cannot keep 16-byte rows: the alignment such a call gets.
          if (n % 2 == 1 && x != DType::F32) p.alignment = 2;
          ++shape;
          ASSERT_NO_FATAL_FAILURE(compile_or_fail(nvrtc, codegen::resolve_forward_problem(p), sm, &families));
        }
  // Few rows of 1M columns: streamed by clusters on sm_90.
  for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm})
    for (DType x : {DType::F32, DType::BF16}) {
      NormProblem p;
      p.kind = kind;
      p.n = 1048576;
      p.x_dtype = x;
      p.weight_dtype = DType::F32;
      p.has_bias = kind == NormKind::LayerNorm;
      ASSERT_NO_FATAL_FAILURE(compile_or_fail(nvrtc, codegen::resolve_forward_problem(p), 90, &families, 64));
    }
  EXPECT_EQ(families, (std::set<std::string>{"rows", "warp", "block", "streamed", "streamed cluster"}));
}

// The forward's 16-bit LayerNorm cluster blocks of 1024 threads (γ and β fp32, the heuristic's
// configs): no spills. They spilled 64-76 bytes while ptxas did not know the cluster rank's
// bound (cluster_rank_below), and ran slower than rows streamed twice (bench/NOTES.md entry 38).
TEST(NvrtcForward, LayerNormClusterBlocksOf1024ThreadsDoNotSpill) {
  std::string why;
  if (!runtime::Nvrtc::available(&why)) GTEST_SKIP() << "no NVRTC: " << why;
  const runtime::Nvrtc& nvrtc = runtime::Nvrtc::get();
  for (DType x : {DType::BF16, DType::F16})
    for (int64_t n : {65536, 131072, 262144}) {
      NormProblem p;
      p.kind = NormKind::LayerNorm;
      p.n = n;
      p.x_dtype = x;
      p.weight_dtype = DType::F32;
      p = codegen::resolve_forward_problem(p);
      const codegen::LaunchConfig c = codegen::choose_forward_config(p, 90);
      ASSERT_TRUE(c.row_in_registers && c.cluster > 1 && c.threads == 1024)
          << codegen::describe_forward(p) << ": " << codegen::describe(c);
      int spilled = -1;
      ASSERT_NO_THROW(spilled = sm90_spill_bytes(nvrtc, p, c)) << codegen::describe_forward(p);
      EXPECT_EQ(spilled, 0) << codegen::describe_forward(p) << " " << codegen::describe(c);
    }
}

// The memory-rich rules' 1024-thread clusters that copy the next row ahead into shared memory
// (shared_prefetch, γ held: fp32 γ, and LayerNorm's clusters of 8 with 16-bit γ) and RMSNorm's
// clusters of 8 between the powers of two compile for sm_90 without spills, as the H200 ran them
// (session 62: 56-64 registers, none spilled).
TEST(NvrtcForward, MemoryRichClustersCompileWithoutSpills) {
  std::string why;
  if (!runtime::Nvrtc::available(&why)) GTEST_SKIP() << "no NVRTC: " << why;
  const runtime::Nvrtc& nvrtc = runtime::Nvrtc::get();
  int copying = 0;
  struct Shape { NormKind kind; int64_t n; DType x; DType weight; };
  for (const Shape& s : {Shape{NormKind::LayerNorm, 65536, DType::BF16, DType::F32},
                         Shape{NormKind::LayerNorm, 262144, DType::F16, DType::F16},
                         Shape{NormKind::RMSNorm, 131072, DType::F16, DType::F32},
                         Shape{NormKind::RMSNorm, 81920, DType::BF16, DType::F32},
                         Shape{NormKind::RMSNorm, 122880, DType::F16, DType::F16}}) {
    const NormProblem p = codegen::resolve_forward_problem(test::make_problem(
        s.kind, s.n, s.x, s.weight, s.kind == NormKind::LayerNorm ? test::Affine::WeightAndBias : test::Affine::WeightOnly));
    const codegen::LaunchConfig c = codegen::choose_forward_config(p, 90, 67108864 / s.n, 132, 18.4);
    ASSERT_TRUE(c.row_in_registers && c.cluster > 1 && c.shared_weights) << codegen::describe_forward(p) << ": " << codegen::describe(c);
    copying += c.shared_prefetch;
    int spilled = -1;
    ASSERT_NO_THROW(spilled = sm90_spill_bytes(nvrtc, p, c)) << codegen::describe_forward(p);
    EXPECT_EQ(spilled, 0) << codegen::describe_forward(p) << " " << codegen::describe(c);
  }
  EXPECT_EQ(copying, 3);
}

// γ and β held in shared memory (shared_weights): every held-weight candidate the tuner has for
// 16-bit rows with fp32 γ compiles for sm_90, γ and β together or either alone, zero-centred γ
// too; the register report of the prefetching ones (two slots a thread) shows no spills.
TEST(NvrtcForward, HeldWeightCandidatesCompileWithoutSpills) {
  std::string why;
  if (!runtime::Nvrtc::available(&why)) GTEST_SKIP() << "no NVRTC: " << why;
  const runtime::Nvrtc& nvrtc = runtime::Nvrtc::get();
  int compiled = 0;
  for (const int64_t n : {5120, 7168, 12288, 14336}) {
    NormProblem raw = test::make_problem(n % 2048 ? NormKind::LayerNorm : NormKind::RMSNorm, n, DType::BF16, DType::F32,
                                         n == 5120 ? test::Affine::WeightAndBias : test::Affine::WeightOnly);
    raw.zero_centered_weight = n == 14336;
    const NormProblem p = codegen::resolve_forward_problem(raw);
    for (const codegen::LaunchConfig& c : codegen::forward_search_space(p, 90, 4096, 132, 18.4)) {
      if (!c.shared_weights) continue;
      const codegen::KernelSource src = codegen::generate_forward_source(p, c);
      EXPECT_NE(src.text.find("constexpr bool kSharedWeights = true"), std::string::npos);
      runtime::CompileOutput out;
      ASSERT_NO_THROW(out = nvrtc.compile(src.text, src.name, codegen::compile_options({90, nvrtc.version()}),
                                          codegen::describe_forward(p)))
          << codegen::describe_forward(p) << " " << codegen::describe(c);
      if (c.prefetch)
        for (const auto& r : test::ptxas_report(out))
          EXPECT_EQ(r.spill_stores, 0) << codegen::describe_forward(p) << " " << codegen::describe(c);
      ++compiled;
    }
  }
  EXPECT_GE(compiled, 8);
}

TEST(NvrtcForward, MisalignedAndMixedDtypesCompile) {
  std::string why;
  if (!runtime::Nvrtc::available(&why)) GTEST_SKIP() << "no NVRTC: " << why;
  const runtime::Nvrtc& nvrtc = runtime::Nvrtc::get();
  std::set<std::string> families;
  for (int alignment : {2, 4, 8})
    for (int64_t n : {1001, 8192, 65537}) {  // 65537: realigned slots, streamed
      NormProblem p;
      p.kind = NormKind::LayerNorm;
      p.n = n;
      p.x_dtype = DType::BF16;
      p.weight_dtype = DType::BF16;
      p.has_bias = true;
      p.dx_dtype = DType::F32;  // the backward's: ignored by the forward
      p.alignment = alignment;
      ASSERT_NO_FATAL_FAILURE(compile_or_fail(nvrtc, codegen::resolve_forward_problem(p), 90, &families));
    }
}

// Phased rows (odd 16-bit rows in phase read as aligned chunks) in every way the statistics are
// formed: LayerNorm in one reduction (64 threads), in two meetings (320), by warp-shifted moments
// (800 threads, and a cluster of two), RMSNorm in a block and a cluster, and the next row
// prefetched; two 16-byte slots a thread, 64 registers a thread; γ and β read element by
// element and held in shared memory. None spills.
TEST(NvrtcForward, PhasedRowsCompileWithoutSpills) {
  std::string why;
  if (!runtime::Nvrtc::available(&why)) GTEST_SKIP() << "no NVRTC: " << why;
  const runtime::Nvrtc& nvrtc = runtime::Nvrtc::get();
  struct Shape { NormKind kind; int64_t n; DType x; int cluster; bool prefetch; };
  const Shape shapes[] = {{NormKind::LayerNorm, 1001, DType::BF16, 1, false},
                          {NormKind::LayerNorm, 5003, DType::BF16, 1, false},
                          {NormKind::LayerNorm, 5003, DType::BF16, 1, true},
                          {NormKind::LayerNorm, 12289, DType::F16, 1, false},
                          {NormKind::LayerNorm, 30001, DType::BF16, 2, false},
                          {NormKind::RMSNorm, 5003, DType::F16, 1, false},
                          {NormKind::RMSNorm, 30001, DType::BF16, 2, true}};
  for (const Shape& s : shapes) {
    NormProblem raw = test::make_problem(s.kind, s.n, s.x, DType::F32,
                                         s.kind == NormKind::LayerNorm ? test::Affine::WeightAndBias : test::Affine::WeightOnly);
    raw.alignment = 2;
    const NormProblem p = codegen::resolve_forward_problem(raw);
    for (bool held : {false, true}) {
      const codegen::LaunchConfig c = test::phased_forward_block(s.n, s.cluster, s.prefetch, held);
      ASSERT_NO_THROW(codegen::check_forward_config(p, c)) << codegen::describe_forward(p) << " " << codegen::describe(c);
      EXPECT_EQ(sm90_spill_bytes(nvrtc, p, c), 0) << codegen::describe_forward(p) << " " << codegen::describe(c);
    }
  }
  // The phased rule's blocks (choose_forward_config on an H200 at many rows), prefetching or not,
  // with ptxas's registers printed for bench/NOTES.md. None spills.
  for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm})
    for (int64_t n : {1001, 2001, 4095, 5003, 8191, 12289, 16385, 20001}) {
      NormProblem raw = test::make_problem(kind, n, DType::BF16, DType::F32,
                                           kind == NormKind::LayerNorm ? test::Affine::WeightAndBias : test::Affine::WeightOnly);
      raw.alignment = 2;
      const NormProblem p = codegen::resolve_forward_problem(raw);
      const codegen::LaunchConfig c = codegen::choose_forward_config(p, 90, 16384, 132, 18.4);
      ASSERT_TRUE(c.phased) << codegen::describe_forward(p) << " " << codegen::describe(c);
      const codegen::KernelSource src = codegen::generate_forward_source(p, c);
      const runtime::CompileOutput out = nvrtc.compile(src.text, src.name, codegen::compile_options({90, nvrtc.version()}),
                                                       codegen::describe_forward(p));
      for (const auto& r : test::ptxas_report(out)) {
        std::printf("%s %s: %d registers, %d bytes spilled\n", codegen::describe_forward(p).c_str(),
                    codegen::describe(c).c_str(), r.registers, r.spill_stores);
        EXPECT_EQ(r.spill_stores, 0) << codegen::describe_forward(p) << " " << codegen::describe(c);
      }
    }
}

// Blocks bounded to fill the SM (rows of a few elements a thread: codegen::unfilled_forward_config)
// spill at some N; the engine then takes the unfilled block, which must not. Over the whole range
// of such rows (16-bit x aligned to 2 bytes up to 8 elements a thread, fp32 rows of 768-1024
// threads), both kinds, with γ and β: where the filled block spills, its fallback holds the row
// without spilling. Also that filling is more than a formality: some N keep the filled block.
TEST(NvrtcForward, RowsThatFillTheSmSpillNothingOrFallBackToBlocksThatDoNot) {
  std::string why;
  if (!runtime::Nvrtc::available(&why)) GTEST_SKIP() << "no NVRTC: " << why;
  const runtime::Nvrtc& nvrtc = runtime::Nvrtc::get();
  int filled_kept = 0, fell_back = 0;
  for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm})
    for (DType x : {DType::BF16, DType::F32}) {
      std::vector<int64_t> ns;
      if (x == DType::BF16)
        for (int64_t n = 129; n <= 4608; n += 224) ns.push_back(n);
      else
        ns = {6001, 6401, 7169, 8191};
      for (int64_t n : ns) {
        NormProblem p = test::make_problem(kind, n, x, DType::F32,
                                           kind == NormKind::LayerNorm ? test::Affine::WeightAndBias : test::Affine::WeightOnly);
        p.alignment = x == DType::BF16 ? 2 : 4;
        p = codegen::resolve_forward_problem(p);
        const codegen::LaunchConfig c = codegen::choose_forward_config(p, 90);
        const std::optional<codegen::LaunchConfig> unfilled = codegen::unfilled_forward_config(p, c);
        if (!unfilled) continue;
        int filled_spills = 0;
        ASSERT_NO_THROW(filled_spills = sm90_spill_bytes(nvrtc, p, c)) << codegen::describe_forward(p) << " " << codegen::describe(c);
        if (filled_spills == 0) {
          ++filled_kept;
          continue;
        }
        ++fell_back;
        int unfilled_spills = -1;
        ASSERT_NO_THROW(unfilled_spills = sm90_spill_bytes(nvrtc, p, *unfilled)) << codegen::describe_forward(p);
        EXPECT_EQ(unfilled_spills, 0) << codegen::describe_forward(p) << " " << codegen::describe(*unfilled)
                                      << " (the filled block spilled " << filled_spills << " bytes)";
      }
    }
  EXPECT_GT(filled_kept, 0) << "no filled block held its row in 32 registers";
  std::printf("filled blocks kept: %d, fallen back: %d\n", filled_kept, fell_back);
}

// ---- fused options (docs/FORWARD.md) -----------------------------------------------------------
// Each fused option alone and a sample of pairs, spread over the forward families: on sm_90 each
// set in two families (named in its row) and each family with five or six sets; sm_80 compiles
// each set once more, on a bf16 shape (its conversions are the arch-dependent code). The shapes
// also vary the vector width (8, 4, 1, 2 elements), which the dropout mask's bit packing
// depends on. Spills are allowed (the option-free tests above check those); a compile error is
// not. 39 compiles in all, in three tests that ctest runs side by side.
namespace {

struct ForwardFamily {
  const char* name;  // as family_of names it
  NormKind kind;     // the gated sets take RMSNorm in the same shape
  int64_t n;
  DType x;
  int alignment;
};
const ForwardFamily kFusedFamilies[] = {
    {"rows", NormKind::RMSNorm, 33, DType::F16, 16},          // 5 slots of 8
    {"warp", NormKind::LayerNorm, 1000, DType::F32, 16},      // slots of 4
    {"block", NormKind::LayerNorm, 5003, DType::BF16, 2},     // scalar slots
    {"cluster", NormKind::RMSNorm, 65536, DType::BF16, 4},    // slots of 2 (sm_90; streamed on sm_80)
    {"streamed", NormKind::LayerNorm, 1048576, DType::BF16, 16},
};
// kFusedFamilies' indices as bits.
constexpr unsigned kRows = 1, kWarp = 2, kBlock = 4, kCluster = 8, kStreamed = 16;

struct ForwardOptionSet {
  const char* name;
  unsigned sm90_families;  // where sm_90 compiles it
  bool residual, rowscale;
  DropoutMask dropout;
  Gate gate;
  bool parallel;
  bool other_y;  // y in fp32 (bf16 where x is fp32)
};
constexpr DropoutMask kNoMask = DropoutMask::None, kBytes = DropoutMask::Bytes, kBits = DropoutMask::Bits;
const ForwardOptionSet kSingleOptions[] = {
    {"residual", kRows | kStreamed, true, false, kNoMask, Gate::None, false, false},
    {"rowscale", kWarp | kBlock, false, true, kNoMask, Gate::None, false, false},
    {"dropout=bytes", kRows | kCluster, false, false, kBytes, Gate::None, false, false},
    {"dropout=bits", kBlock | kStreamed, false, false, kBits, Gate::None, false, false},
    {"gate=after-norm", kWarp | kCluster, false, false, kNoMask, Gate::AfterNorm, false, false},
    {"gate=before-norm", kRows | kStreamed, false, false, kNoMask, Gate::BeforeNorm, false, false},
    {"parallel", kBlock | kCluster, false, false, kNoMask, Gate::None, true, false},
};
const ForwardOptionSet kPairedOptions[] = {
    {"residual+dropout=bits", kWarp | kCluster, true, false, kBits, Gate::None, false, false},
    {"rowscale+dropout=bytes", kRows | kStreamed, false, true, kBytes, Gate::None, false, false},
    {"residual+parallel", kWarp | kStreamed, true, false, kNoMask, Gate::None, true, false},
    {"gate=before-norm+residual", kBlock | kCluster, true, false, kNoMask, Gate::BeforeNorm, false, false},
    {"y dtype other than x's", kRows | kBlock, false, false, kNoMask, Gate::None, false, true},
    {"y dtype other than x's+parallel+dropout=bits", kWarp | kCluster, false, false, kBits, Gate::None, true, true},
};

std::string family_of(const codegen::LaunchConfig& c) {
  if (!c.row_in_registers) return "streamed";
  if (c.cluster > 1) return "cluster";
  return c.threads_per_row < 32 ? "rows" : c.threads_per_row == 32 ? "warp" : "block";
}

NormProblem fused_forward_problem(const ForwardFamily& f, const ForwardOptionSet& o) {
  NormProblem p;
  p.kind = o.gate != Gate::None ? NormKind::RMSNorm : f.kind;
  p.n = f.n;
  p.x_dtype = f.x;
  p.weight_dtype = DType::F32;
  p.has_bias = p.kind == NormKind::LayerNorm;
  p.alignment = f.alignment;
  p.residual = o.residual;
  p.rowscale = o.rowscale;
  p.dropout = o.dropout;
  p.gate = o.gate;
  p.parallel = o.parallel;
  if (o.other_y) p.dy_dtype = f.x == DType::F32 ? DType::BF16 : DType::F32;
  return p;
}

// Compiles the sets whose index i and family index f meet `take(i, f)`: each set at least once,
// and on sm_90 every family at least once, in the family it is meant for.
template <typename Take>
void compile_fused_forward(int sm, const std::vector<ForwardOptionSet>& sets, Take take) {
  std::string why;
  if (!runtime::Nvrtc::available(&why)) GTEST_SKIP() << "no NVRTC: " << why;
  const runtime::Nvrtc& nvrtc = runtime::Nvrtc::get();
  std::set<std::string> families;
  std::vector<int> per_set(sets.size(), 0);
  for (size_t f = 0; f < std::size(kFusedFamilies); ++f)
    for (size_t i = 0; i < sets.size(); ++i) {
      if (!take(i, f)) continue;
      const NormProblem raw = fused_forward_problem(kFusedFamilies[f], sets[i]);
      ASSERT_NO_THROW(codegen::validate_forward_problem(raw)) << sets[i].name;
      const NormProblem p = codegen::resolve_forward_problem(raw);
      ASSERT_TRUE(sets[i].other_y || codegen::has_forward_fused_options(p)) << sets[i].name;
      const codegen::LaunchConfig c = codegen::choose_forward_config(p, sm);
      const std::string family = family_of(c);
      if (sm >= 90) EXPECT_EQ(family, kFusedFamilies[f].name) << codegen::describe_forward(p);
      families.insert(family);
      ++per_set[i];
      const codegen::KernelSource src = codegen::generate_forward_source(p, c);
      runtime::CompileOutput out;
      EXPECT_NO_THROW(out = nvrtc.compile(src.text, src.name, codegen::compile_options({sm, nvrtc.version()}),
                                          codegen::describe_forward(p)))
          << sets[i].name << ": " << codegen::describe_forward(p) << " sm_" << sm << " " << codegen::describe(c);
      EXPECT_GT(out.cubin.size(), 1000u) << codegen::describe_forward(p);
    }
  for (size_t i = 0; i < sets.size(); ++i) EXPECT_GE(per_set[i], 1) << sets[i].name << " was never compiled";
  if (sm >= 90) EXPECT_EQ(families, (std::set<std::string>{"rows", "warp", "block", "cluster", "streamed"}));
}

}  // namespace

TEST(NvrtcForwardFused, EachOptionAloneCompilesAcrossTheFamiliesForSm90) {
  const std::vector<ForwardOptionSet> sets(std::begin(kSingleOptions), std::end(kSingleOptions));
  compile_fused_forward(90, sets, [&](size_t i, size_t f) { return (sets[i].sm90_families >> f) & 1u; });
}

TEST(NvrtcForwardFused, PairsCompileAcrossTheFamiliesForSm90) {
  const std::vector<ForwardOptionSet> sets(std::begin(kPairedOptions), std::end(kPairedOptions));
  compile_fused_forward(90, sets, [&](size_t i, size_t f) { return (sets[i].sm90_families >> f) & 1u; });
}

// sm_80: each set once, on one of the bf16 shapes (block, cluster's shape, streamed; no clusters
// below sm_90, so that shape streams there).
TEST(NvrtcForwardFused, EachOptionAndPairCompilesForSm80) {
  std::vector<ForwardOptionSet> sets(std::begin(kSingleOptions), std::end(kSingleOptions));
  sets.insert(sets.end(), std::begin(kPairedOptions), std::end(kPairedOptions));
  compile_fused_forward(80, sets, [](size_t i, size_t f) { return f >= 2 && i % 3 == f - 2; });
}
