// The fused options (docs/FUSED.md) on the GPU against the float64 reference: each option and
// a sample of combinations, LayerNorm and RMSNorm, over N in {1, 33, 4096, 8192, 65536} and M
// in {1, 199, 4096} with the x dtype rotating through fp32, fp16 and bf16; then every kernel
// family with all options on, in-place accumulation into dresidual, misaligned rows, and a dx
// dtype other than x's. Outputs (dx, dγ, dβ, dresidual_in) are NaN-poisoned before each run and
// every case draws fresh inputs (its seed is printed with any failure).
//
// Filter: --gtest_filter='BackwardFused*'
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/device_run.h"
#include "support/kernel_warmup.h"
#include "support/problem_variants.h"
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

NormProblem with_options(NormProblem p, const Options& o) {
  p.residual = o.residual;
  p.zero_centered_weight = o.zero_centered;
  p.rowscale = o.rowscale;
  p.dropout = o.dropout;
  return p;
}

// LayerNorm with γ and β, RMSNorm with γ (fp32 γ, as in the README's table).
NormProblem base_problem(NormKind kind, int64_t n, DType x, DType dx = DType::Default) {
  return make_problem(kind, n, x, DType::F32, kind == NormKind::LayerNorm ? Affine::WeightAndBias : Affine::WeightOnly,
                      dx);
}

const std::vector<int64_t> kRowCounts = {1, 199, 4096};
const std::vector<int64_t> kHiddenSizes = {1, 33, 4096, 8192, 65536};
constexpr int64_t kMaxElements = int64_t{1} << 23;  // M·N above this only with M = 1
constexpr DType kDtypes[] = {DType::BF16, DType::F16, DType::F32};
constexpr int kFailedCasesReported = 5;

// Compiles every kernel the cases may use, in parallel, before any is timed or run.
void prepare(Engine& engine, const std::vector<NormProblem>& problems) {
  std::vector<NormProblem> kernels;
  for (const NormProblem& p : problems)
    for (const NormProblem& v : alignment_variants(p)) kernels.push_back(v);
  const std::vector<std::string> failures = prepare_in_parallel(engine, kernels);
  ASSERT_TRUE(failures.empty()) << failures.size() << " kernels failed to prepare, the first: " << failures.front();
}

class BackwardFused : public GpuTest, public ::testing::WithParamInterface<Options> {};

TEST_P(BackwardFused, MatchesFloat64Reference) {
  Engine& engine = shared_engine();
  const Options& o = GetParam();
  // The x dtype rotates with N, so each option meets every dtype; the kind alternates too.
  auto problem = [&](int n_index, NormKind kind) {
    return with_options(base_problem(kind, kHiddenSizes[n_index], kDtypes[n_index % 3]), o);
  };
  std::vector<NormProblem> problems;
  for (int i = 0; i < static_cast<int>(kHiddenSizes.size()); ++i)
    for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm}) problems.push_back(problem(i, kind));
  prepare(engine, problems);

  int case_index = 0, failed = 0;
  for (int i = 0; i < static_cast<int>(kHiddenSizes.size()); ++i)
    for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm})
      for (int64_t m : kRowCounts) {
        if (m > 1 && m * kHiddenSizes[i] > kMaxElements) continue;
        RunOptions run;
        run.caller_workspace = case_index++ % 3 == 0;
        FusedSpec spec;
        spec.dropout_p = o.dropout_p;
        spec.dresidual_in = case_index % 2 == 0;  // dh asked for in every other case
        spec.dresidual_stride = case_index % 4 == 1 ? kHiddenSizes[i] + 8 : 0;
        const NormInputs in = make_inputs(problem(i, kind), m, fresh_seed(), {}, spec);
        const ::testing::AssertionResult match = backward_matches_reference(engine, in, stream(), run);
        EXPECT_TRUE(match);
        if (!match && ++failed == kFailedCasesReported) FAIL() << "stopping after " << failed << " failed cases";
      }
}

INSTANTIATE_TEST_SUITE_P(EachOption, BackwardFused, ::testing::ValuesIn(kOptions),
                         [](const auto& info) { return std::string(info.param.name); });

// One N per kernel family (sm_90 heuristic): several rows per block, registers, staged, odd N
// (shifted, interleaved staged rows in 16-bit types), clusters, streamed.
struct FamilyShape {
  int64_t n, m;
};
const FamilyShape kFamilies[] = {{33, 199}, {4096, 199}, {5120, 199}, {5003, 199}, {65536, 37}, {262144, 3}};

class BackwardFusedFamilies : public GpuTest {};

TEST_F(BackwardFusedFamilies, AllOptionsInEveryFamily) {
  Engine& engine = shared_engine();
  const Options& all = kOptions[std::size(kOptions) - 1];
  std::vector<NormProblem> problems;
  for (const FamilyShape& f : kFamilies)
    for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm})
      for (DType x : {DType::BF16, DType::F32}) problems.push_back(with_options(base_problem(kind, f.n, x), all));
  prepare(engine, problems);
  int i = 0;
  for (const FamilyShape& f : kFamilies)
    for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm})
      for (DType x : {DType::BF16, DType::F32}) {
        const NormInputs in = make_inputs(problems[i++], f.m, fresh_seed(), {}, FusedSpec{0.5, true, 0});
        EXPECT_TRUE(backward_matches_reference(engine, in, stream()));
      }
}

// dx is dresidual itself: each element of dresidual is read before the same thread writes dx
// there, in every family; padded rows (stride N + 8) keep the gaps untouched in between.
TEST_F(BackwardFusedFamilies, AccumulatesInPlaceIntoDresidual) {
  Engine& engine = shared_engine();
  std::vector<Options> sets = {kOptions[0], kOptions[std::size(kOptions) - 1]};  // residual alone; all
  for (const Options& o : sets)
    for (const FamilyShape& f : kFamilies)
      for (DType x : {DType::BF16, DType::F32}) {
        const NormKind kind = x == DType::BF16 ? NormKind::LayerNorm : NormKind::RMSNorm;
        RunOptions run;
        run.dx_is_dresidual = true;
        const NormInputs in =
            make_inputs(with_options(base_problem(kind, f.n, x), o), f.m, fresh_seed(), {}, FusedSpec{0.1, true, f.n + 8});
        EXPECT_TRUE(backward_matches_reference(engine, in, stream(), run)) << "in place, " << o.name;
      }
}

// Base pointers one element off 16 bytes: narrower vectors, and shifted staged rows.
TEST_F(BackwardFusedFamilies, MisalignedRowsWithAllOptions) {
  Engine& engine = shared_engine();
  const Options& all = kOptions[std::size(kOptions) - 1];
  for (const FamilyShape& f : kFamilies)
    for (DType x : {DType::BF16, DType::F16}) {
      RunOptions run;
      run.misalign_elements = 1;
      const NormInputs in = make_inputs(with_options(base_problem(NormKind::LayerNorm, f.n, x), all), f.m,
                                        fresh_seed(), {}, FusedSpec{0.1, true, 0});
      EXPECT_TRUE(backward_matches_reference(engine, in, stream(), run));
    }
}

// dx (and so dresidual and dresidual_in) in another dtype than x, with the residual option.
TEST_F(BackwardFusedFamilies, ResidualWithADxDtypeOtherThanX) {
  Engine& engine = shared_engine();
  const struct { DType x, dx; } pairs[] = {{DType::BF16, DType::F32}, {DType::F32, DType::BF16}, {DType::F16, DType::F32}};
  for (const auto& pair : pairs)
    for (int64_t n : {33, 4096, 5003, 65536})
      for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm}) {
        Options residual_rowscale = kOptions[0];
        residual_rowscale.name = "ResidualRowScale";
        residual_rowscale.rowscale = true;
        for (const Options& o : {kOptions[0], residual_rowscale}) {
          const NormInputs in = make_inputs(with_options(base_problem(kind, n, pair.x, pair.dx), o), 37, fresh_seed(),
                                            {}, FusedSpec{0, true, 0});
          EXPECT_TRUE(backward_matches_reference(engine, in, stream())) << o.name;
        }
      }
}

}  // namespace
}  // namespace normjit::test
