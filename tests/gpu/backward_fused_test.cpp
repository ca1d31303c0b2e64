// The fused options (docs/FUSED.md) on the GPU against the float64 reference: each option and
// a sample of combinations, LayerNorm and RMSNorm, over N in {1, 33, 4096, 8192, 65536} and M
// in {1, 199, 4096} with the x dtype rotating through fp32, fp16 and bf16; many 16-bit rows of
// 1025-16384 with every option; then every kernel family with all options on, in-place
// accumulation into dresidual, misaligned rows, and a dx dtype other than x's. Outputs (dx, dγ,
// dβ, dresidual_in) are NaN-poisoned before each run and every case draws fresh inputs (its
// seed is printed with any failure).
//
// Filter: --gtest_filter='*BackwardFused*' (the per-option tests are EachOption/BackwardFused.*)
#include <gtest/gtest.h>

#include <limits>
#include <ostream>
#include <string>
#include <vector>

#include "support/device_run.h"
#include "support/fused_cases.h"
#include "support/random.h"
#include "support/shared_engine.h"

namespace normjit::test {
namespace {

// Which options a case turns on, and the drop probability its mask was drawn with.
struct Options {
  const char* name;
  bool residual, zero_centered, rowscale;
  DropoutMask dropout;
  double dropout_p;
};

const Options kOptions[] = {
    {"Residual", true, false, false, DropoutMask::None, 0},
    {"ZeroCenteredWeight", false, true, false, DropoutMask::None, 0},
    {"RowScale", false, false, true, DropoutMask::None, 0},
    {"DropoutBytes", false, false, false, DropoutMask::Bytes, 0.1},
    {"DropoutBits", false, false, false, DropoutMask::Bits, 0.5},
    {"ResidualRowScaleDropoutBits", true, false, true, DropoutMask::Bits, 0.1},
    {"ZeroCenteredWeightResidual", true, true, false, DropoutMask::None, 0},
    {"All", true, true, true, DropoutMask::Bytes, 0.5},
};

// How gtest (and ctest's test list) prints an option set.
void PrintTo(const Options& o, std::ostream* os) { *os << o.name; }

NormProblem with_options(NormProblem p, const Options& o) {
  p.residual = o.residual;
  p.zero_centered_weight = o.zero_centered;
  p.rowscale = o.rowscale;
  p.dropout = o.dropout;
  return p;
}

constexpr DType kDtypes[] = {DType::BF16, DType::F16, DType::F32};

class BackwardFused : public GpuTest, public ::testing::WithParamInterface<Options> {};

TEST_P(BackwardFused, MatchesFloat64Reference) {
  const Options& o = GetParam();
  std::vector<FusedCase> cases;
  for (size_t i = 0; i < kFusedHiddenSizes.size(); ++i)
    for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm})
      for (int64_t m : kFusedRowCounts) {
        const int64_t n = kFusedHiddenSizes[i];
        if (m > 1 && m * n > fused_max_elements()) continue;
        // The x dtype rotates with N, so each option meets every dtype.
        FusedCase c{with_options(fused_base_problem(kind, n, kDtypes[i % 3]), o), m, {}, {}};
        const int index = static_cast<int>(cases.size());
        c.spec.dropout_p = o.dropout_p;
        c.spec.dresidual_in = index % 2 == 0;                // dh asked for in every other case
        c.spec.dresidual_stride = index % 4 == 1 ? n + 8 : 0;  // and padded dresidual rows
        c.run.caller_workspace = index % 3 == 0;
        cases.push_back(c);
      }
  run_fused_cases(shared_engine(), stream(), cases);
}

INSTANTIATE_TEST_SUITE_P(EachOption, BackwardFused, ::testing::ValuesIn(kOptions),
                         [](const auto& info) { return std::string(info.param.name); });

class BackwardFusedFamilies : public GpuTest {};

TEST_F(BackwardFusedFamilies, AllOptionsInEveryFamily) {
  const Options& all = kOptions[std::size(kOptions) - 1];
  std::vector<FusedCase> cases;
  for (const FamilyShape& f : kFamilyShapes)
    for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm})
      for (DType x : {DType::BF16, DType::F32})
        cases.push_back({with_options(fused_base_problem(kind, f.n, x), all), f.m, FusedSpec{0.5, true, 0}, {}});
  run_fused_cases(shared_engine(), stream(), cases);
}

// Many rows of 1024-16384 in 16-bit types (M = 600: a bucket of many rows on any GPU up to 256
// SMs), where fused problems have rules of their own (shared sums at 8 or 16 elements a thread
// in one block or a pair, RMSNorm's 8 elements in registers): every option set, both gate
// orders, parallel norms and recompute (with and without x as the fallback), LayerNorm and
// RMSNorm where the option exists, the x dtype alternating bf16 / fp16.
TEST_F(BackwardFusedFamilies, EveryOptionOnManyRowsOf1025To16384) {
  const Options& all = kOptions[std::size(kOptions) - 1];
  std::vector<FusedCase> cases;
  int index = 0;
  // (1024, bf16: the memory-rich rules' one row a block for parallel norms, the residual and the
  // gate; 2048, fp16: fp16 parallel norms in shared sums.)
  for (int64_t n : {1024, 1152, 1280, 1536, 1792, 2048, 2304, 2560, 3072, 3584, 4000, 5120, 7168, 8192, 10240, 14336, 16384}) {
    const DType x = index++ % 2 == 0 ? DType::BF16 : DType::F16;
    for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm}) {
      const NormProblem base = fused_base_problem(kind, n, x);
      cases.push_back({with_options(base, kOptions[0]), 600, FusedSpec{0, true, 0}, {}});
      cases.push_back({with_options(base, all), 600, FusedSpec{all.dropout_p, true, n + 8}, {}});
      NormProblem parallel = base;
      parallel.parallel = true;
      cases.push_back({parallel, 600, FusedSpec{}, {}});
      NormProblem recompute = base;
      recompute.recompute_from_output = true;
      FusedSpec with_x;
      with_x.recompute_with_x = kind == NormKind::LayerNorm;
      cases.push_back({recompute, 600, with_x, {}});
    }
    for (Gate order : {Gate::AfterNorm, Gate::BeforeNorm}) {
      NormProblem gated = fused_base_problem(NormKind::RMSNorm, n, x);
      gated.gate = order;
      cases.push_back({gated, 600, FusedSpec{}, {}});
    }
  }
  run_fused_cases(shared_engine(), stream(), cases);
}

// dx is dresidual itself: each element of dresidual is read before the same thread writes dx
// there, in every family; rows padded to N + 8 leave the gaps between them untouched. 4095 in
// 16-bit: rows of an element a slot, which read eight slots' dresidual ahead of their dx stores.
TEST_F(BackwardFusedFamilies, AccumulatesInPlaceIntoDresidual) {
  std::vector<FamilyShape> shapes = kFamilyShapes;
  shapes.push_back({4095, 1024});
  std::vector<FusedCase> cases;
  for (const Options& o : {kOptions[0], kOptions[std::size(kOptions) - 1]})  // residual alone; all
    for (const FamilyShape& f : shapes)
      for (DType x : {DType::BF16, DType::F32}) {
        const NormKind kind = x == DType::BF16 ? NormKind::LayerNorm : NormKind::RMSNorm;
        FusedCase c{with_options(fused_base_problem(kind, f.n, x), o), f.m, FusedSpec{0.1, true, f.n + 8}, {}};
        c.run.dx_is_dresidual = true;
        cases.push_back(c);
      }
  run_fused_cases(shared_engine(), stream(), cases);
}

// dx written over x, or over dy, itself: the call accepts both (docs/FUSED.md), on the ground
// that every family reads an element of x and dy before the same thread writes dx there. Each
// family, without options and with all of them, LayerNorm and RMSNorm.
TEST_F(BackwardFusedFamilies, WritesDxOverXOrDyInPlace) {
  std::vector<FusedCase> cases;
  for (const bool over_x : {true, false})
    for (const FamilyShape& f : kFamilyShapes)
      for (DType x : {DType::BF16, DType::F32}) {
        const NormKind kind = over_x == (x == DType::BF16) ? NormKind::LayerNorm : NormKind::RMSNorm;
        const bool all = (f.n + static_cast<int64_t>(over_x)) % 2 == 0;
        const Options none{"None", false, false, false, DropoutMask::None, 0};
        const Options& o = all ? kOptions[std::size(kOptions) - 1] : none;
        FusedCase c{with_options(fused_base_problem(kind, f.n, x), o), f.m, FusedSpec{o.dropout_p, true, 0}, {}};
        c.run.dx_is_x = over_x;
        c.run.dx_is_dy = !over_x;
        cases.push_back(c);
      }
  run_fused_cases(shared_engine(), stream(), cases);
}

// Base pointers one element off 16 bytes: narrower vectors, and shifted staged rows.
TEST_F(BackwardFusedFamilies, MisalignedRowsWithAllOptions) {
  const Options& all = kOptions[std::size(kOptions) - 1];
  std::vector<FusedCase> cases;
  for (const FamilyShape& f : kFamilyShapes)
    for (DType x : {DType::BF16, DType::F16}) {
      FusedCase c{with_options(fused_base_problem(NormKind::LayerNorm, f.n, x), all), f.m, FusedSpec{0.1, true, 0}, {}};
      c.run.misalign_elements = 1;
      cases.push_back(c);
    }
  run_fused_cases(shared_engine(), stream(), cases);
}

// dx (and so dresidual and dresidual_in) in another dtype than x, with the residual option
// alone and with the row scale.
TEST_F(BackwardFusedFamilies, ResidualWithADxDtypeOtherThanX) {
  Options residual_rowscale = kOptions[0];
  residual_rowscale.name = "ResidualRowScale";
  residual_rowscale.rowscale = true;
  const struct { DType x, dx; } pairs[] = {{DType::BF16, DType::F32}, {DType::F32, DType::BF16}, {DType::F16, DType::F32}};
  std::vector<FusedCase> cases;
  for (const auto& pair : pairs)
    for (int64_t n : {33, 4096, 5003, 65536})
      for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm})
        for (const Options& o : {kOptions[0], residual_rowscale})
          cases.push_back({with_options(fused_base_problem(kind, n, pair.x, pair.dx), o), 37, FusedSpec{0, true, 0}, {}});
  run_fused_cases(shared_engine(), stream(), cases);
}

// A NaN in dresidual reaches exactly dh and dx of its element, also where the mask dropped
// it (dx = dh·0 is NaN, as in PyTorch's grad·mask), and nothing else.
TEST_F(BackwardFusedFamilies, NanInDresidualReachesExactlyItsElement) {
  Engine& engine = shared_engine();
  for (const FamilyShape& f : kFamilyShapes)
    for (DType x : {DType::BF16, DType::F32}) {
      NormProblem p = with_options(fused_base_problem(NormKind::RMSNorm, f.n, x), kOptions[5]);  // residual, rowscale, bits
      NormInputs in = make_inputs(p, f.m, fresh_seed(), {}, FusedSpec{0.5, true, 0});
      const int64_t row = f.m / 2;
      int64_t dropped = -1;
      for (int64_t c = 0; c < f.n && dropped < 0; ++c)
        if (!in.fused.kept(DropoutMask::Bits, row, c)) dropped = c;
      in.fused.dresidual.set(row, 0, std::numeric_limits<double>::quiet_NaN());
      if (dropped >= 0) in.fused.dresidual.set(row, dropped, std::numeric_limits<double>::quiet_NaN());
      EXPECT_TRUE(backward_matches_reference(engine, in, stream())) << "NaN at column 0 and dropped column " << dropped;
    }
}

}  // namespace
}  // namespace normjit::test
