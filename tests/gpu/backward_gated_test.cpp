// Gated RMSNorm (docs/FUSED.md) on the GPU against the float64 reference, in both orders:
// over N in {1, 33, 4096, 8192, 65536} and M in {1, 199, 4096} in bf16 and fp32 (z and dz
// rows padded in some cases); in every kernel family, alone and with every other fused option;
// with misaligned rows, a dx (and dz) dtype other than x's, and without γ; on many rows in each
// of the gate's own clusters. dx, dz, dγ (and dresidual_in) are NaN-poisoned before each run,
// and every case draws fresh inputs (its seed is printed with any failure). The saved rstd of a
// gate-before-norm case is that of x·silu(z).
//
// Filter: --gtest_filter='*BackwardGated*'
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/fused_cases.h"
#include "support/problem_variants.h"
#include "support/shared_engine.h"

namespace normjit::test {
namespace {

NormProblem gated(Gate gate, int64_t n, DType x, DType dx = DType::Default) {
  NormProblem p = fused_base_problem(NormKind::RMSNorm, n, x, dx);
  p.gate = gate;
  return p;
}

// Every other fused option on top of the gate.
NormProblem with_all_options(NormProblem p) {
  p.residual = p.zero_centered_weight = p.rowscale = true;
  p.dropout = DropoutMask::Bits;
  return p;
}

const char* gate_label(Gate gate) { return gate == Gate::AfterNorm ? "AfterNorm" : "BeforeNorm"; }

class BackwardGated : public GpuTest, public ::testing::WithParamInterface<Gate> {};

TEST_P(BackwardGated, MatchesFloat64ReferenceOverTheIssuesShapes) {
  std::vector<FusedCase> cases;
  for (int64_t n : kFusedHiddenSizes)
    for (int64_t m : kFusedRowCounts)
      for (DType x : {DType::BF16, DType::F32}) {
        if (m > 1 && m * n > fused_max_elements()) continue;
        FusedCase c{gated(GetParam(), n, x), m, {}, {}};
        const int index = static_cast<int>(cases.size());
        c.spec.z_stride = index % 3 == 1 ? n + 8 : 0;   // padded z rows in a third of the cases
        c.spec.dz_stride = index % 4 == 2 ? n + 3 : 0;  // and padded dz rows in a quarter
        c.run.caller_workspace = index % 2 == 0;
        cases.push_back(c);
      }
  run_fused_cases(shared_engine(), stream(), cases);
}

TEST_P(BackwardGated, EveryKernelFamilyAloneAndWithEveryOtherOption) {
  std::vector<FusedCase> cases;
  for (const FamilyShape& f : kFamilyShapes)
    for (DType x : {DType::BF16, DType::F32})
      for (bool all : {false, true}) {
        const NormProblem p = gated(GetParam(), f.n, x);
        cases.push_back({all ? with_all_options(p) : p, f.m, FusedSpec{0.5, true, 0, f.n + 8, 0}, {}});
      }
  run_fused_cases(shared_engine(), stream(), cases);
}

// Base pointers one element off 16 bytes: narrower vectors, and shifted staged rows.
TEST_P(BackwardGated, MisalignedRows) {
  std::vector<FusedCase> cases;
  for (const FamilyShape& f : kFamilyShapes)
    for (DType x : {DType::BF16, DType::F16}) {
      FusedCase c{gated(GetParam(), f.n, x), f.m, {}, {}};
      c.run.misalign_elements = 1;
      cases.push_back(c);
    }
  run_fused_cases(shared_engine(), stream(), cases);
}

// dz is written in dx's dtype, which may differ from x's (and z's); and the plain
// normalisation (no γ), where the gate after the norm multiplies x̂ alone.
TEST_P(BackwardGated, OtherDxDtypesAndNoWeight) {
  const struct { DType x, dx; } pairs[] = {{DType::BF16, DType::F32}, {DType::F32, DType::BF16}, {DType::F16, DType::F32}};
  std::vector<FusedCase> cases;
  for (int64_t n : {33, 4096, 5003, 65536}) {
    for (const auto& pair : pairs) cases.push_back({gated(GetParam(), n, pair.x, pair.dx), 37, {}, {}});
    NormProblem plain = gated(GetParam(), n, DType::BF16);
    plain.has_weight = false;
    cases.push_back({plain, 37, {}, {}});
  }
  run_fused_cases(shared_engine(), stream(), cases);
}

// Many rows (M = 300: a bucket of many rows on any GPU up to 256 SMs) where the gate has clusters
// of its own: at 10241-12288 after the norm a pair of blocks prefetching (16-bit γ) or of two
// slots a thread (fp16, fp32 γ), or one block of 8-byte vectors (bf16, fp32 γ; 10752); at
// 32769-131072 (codegen gate_long_rows) two slots a thread in a cluster of 4, one slot
// prefetching, one slot in a cluster of 8 and of 16, and the clusters of 8 of two slots it keeps;
// bf16 and fp16, fp32 and 16-bit γ; z rows padded in half the cases.
TEST_P(BackwardGated, ManyRowsInEachOfTheirClusters) {
  const struct {
    int64_t n;
    DType x;
    bool same_weights;
  } shapes[] = {{11264, DType::BF16, true},  {11264, DType::F16, false}, {10752, DType::BF16, false},
                {36864, DType::BF16, false}, {36864, DType::F16, true},   {40960, DType::F16, false},
                {45056, DType::F16, true},   {53248, DType::BF16, false}, {53248, DType::F16, false},
                {73728, DType::F16, true},   {98304, DType::F16, true},   {122880, DType::BF16, false}};
  std::vector<FusedCase> cases;
  for (const auto& s : shapes) {
    NormProblem p = gated(GetParam(), s.n, s.x);
    if (s.same_weights) p.weight_dtype = s.x;
    FusedCase c{p, 300, {}, {}};
    c.spec.z_stride = cases.size() % 2 == 1 ? s.n + 8 : 0;
    cases.push_back(c);
  }
  run_fused_cases(shared_engine(), stream(), cases);
}

INSTANTIATE_TEST_SUITE_P(EachOrder, BackwardGated, ::testing::Values(Gate::AfterNorm, Gate::BeforeNorm),
                         [](const auto& info) { return std::string(gate_label(info.param)); });

}  // namespace
}  // namespace normjit::test
