// Parallel norms of one input (docs/FUSED.md) on the GPU against the float64 reference:
// LayerNorm and RMSNorm over N in {1, 33, 4096, 8192, 65536} and M in {1, 199, 4096} in bf16
// and fp32 (dy1 rows padded in some cases); in every kernel family, alone and with the
// residual, zero-centred γ, row scale and dropout; misaligned rows; other affine forms
// (γ only, β only, neither; γ in x's dtype); many 16-bit rows in the shapes of the H200's rule
// for them; and zero rows, which zero all four of dγ, dβ, dγ1 and dβ1. dx, dγ, dβ, dγ1 and dβ1
// are NaN-poisoned before each run, and every case draws fresh inputs (its seed is printed with
// any failure).
//
// Filter: --gtest_filter='*BackwardParallel*'
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "support/fused_cases.h"
#include "support/gpu.h"
#include "support/problem_variants.h"
#include "support/shared_engine.h"

namespace normjit::test {
namespace {

NormProblem parallel(NormProblem p) {
  p.parallel = true;
  return p;
}

class BackwardParallel : public GpuTest {};

TEST_F(BackwardParallel, MatchesFloat64ReferenceOverTheIssuesShapes) {
  std::vector<FusedCase> cases;
  for (int64_t n : kFusedHiddenSizes)
    for (int64_t m : kFusedRowCounts)
      for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm})
        for (DType x : {DType::BF16, DType::F32}) {
          if (m > 1 && m * n > fused_max_elements()) continue;
          FusedCase c{parallel(fused_base_problem(kind, n, x)), m, {}, {}};
          const int index = static_cast<int>(cases.size());
          c.spec.dy1_stride = index % 3 == 1 ? n + 8 : 0;  // padded dy1 rows in a third of the cases
          c.run.caller_workspace = index % 2 == 0;        // which must hold both norms' partials
          cases.push_back(c);
        }
  run_fused_cases(shared_engine(), stream(), cases);
}

TEST_F(BackwardParallel, EveryKernelFamilyAloneAndWithTheOtherOptions) {
  std::vector<FusedCase> cases;
  for (const FamilyShape& f : kFamilyShapes)
    for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm})
      for (DType x : {DType::BF16, DType::F32})
        for (bool all : {false, true}) {
          NormProblem p = parallel(fused_base_problem(kind, f.n, x));
          if (all) {
            p.residual = p.zero_centered_weight = p.rowscale = true;
            p.dropout = DropoutMask::Bytes;
          }
          FusedCase c{p, f.m, {}, {}};
          c.spec.dy1_stride = f.n + 8;
          c.run.caller_workspace = all;
          cases.push_back(c);
        }
  run_fused_cases(shared_engine(), stream(), cases);
}

// Many 16-bit rows on the H200's rules, where packed rows keep pass 1's g for the dx pass
// (kHoldsSecondDy) and parallel_norms_config gives blocks of a slot a thread (RMSNorm
// 4096-8192, prefetching at 6144; LayerNorm bf16 8192), clusters of 512-thread blocks
// (LayerNorm 16384 and 32768, RMSNorm 32768) and clusters of four blocks of two slots a thread,
// two an SM (18440, a last slot short, 20480 and 24576); LayerNorm's 6144 keeps the rules
// before. M = 600: many rows (a bucket past the few-rows rules), several rows a block.
TEST_F(BackwardParallel, HeldGradientRowsInEveryShapeOfTheRule) {
  std::vector<FusedCase> cases;
  for (int64_t n : {4096, 6144, 8192, 13832, 14336, 16384, 18440, 20480, 24576, 32768})
    for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm})
      for (DType x : {DType::BF16, DType::F16}) {
        NormProblem p = parallel(fused_base_problem(kind, n, x));
        if (x == DType::F16) p.weight_dtype = DType::F16;  // and γ in x's dtype
        FusedCase c{p, 600, {}, {}};
        c.spec.dy1_stride = n % 8192 == 0 ? n + 8 : 0;
        cases.push_back(c);
      }
  run_fused_cases(shared_engine(), stream(), cases);
}

// Base pointers one element off 16 bytes: narrower vectors, and shifted staged rows.
TEST_F(BackwardParallel, MisalignedRows) {
  std::vector<FusedCase> cases;
  for (const FamilyShape& f : kFamilyShapes)
    for (DType x : {DType::BF16, DType::F16}) {
      FusedCase c{parallel(fused_base_problem(NormKind::LayerNorm, f.n, x)), f.m, {}, {}};
      c.run.misalign_elements = 1;
      cases.push_back(c);
    }
  run_fused_cases(shared_engine(), stream(), cases);
}

// γ alone, β alone, neither (dx only), and γ in x's dtype, for several row counts (M = 1 and 7
// write dγ/dβ from one row group on some families; M = 300 reduces partial rows).
TEST_F(BackwardParallel, EveryAffineForm) {
  std::vector<FusedCase> cases;
  for (int64_t n : {33, 4096, 5003, 65536})
    for (int64_t m : {1, 7, 300}) {
      const DType x = n % 2 == 0 ? DType::BF16 : DType::F32;
      for (Affine affine : {Affine::WeightOnly, Affine::BiasOnly, Affine::None})
        cases.push_back({parallel(make_problem(NormKind::LayerNorm, n, x, DType::F32, affine)), m, {}, {}});
      cases.push_back({parallel(make_problem(NormKind::RMSNorm, n, x, x, Affine::WeightOnly)), m, {}, {}});
    }
  run_fused_cases(shared_engine(), stream(), cases);
}

// An empty batch zeroes both norms' dγ and dβ (the sum over no rows), as it does for one norm.
TEST_F(BackwardParallel, ZeroRowsZeroBothNormsGradients) {
  Engine& engine = shared_engine();
  for (int64_t n : {33, 4096, 262144}) {
    const NormProblem p = parallel(fused_base_problem(NormKind::LayerNorm, n, DType::BF16));
    const size_t bytes = static_cast<size_t>(n) * dtype_bytes(p.weight_dtype);
    DeviceBuffer dweight(bytes), dbias(bytes), dweight1(bytes), dbias1(bytes);
    for (DeviceBuffer* b : {&dweight, &dbias, &dweight1, &dbias1}) b->poison();
    BackwardArgs args;
    args.m = 0;
    args.dweight = dweight.ptr();
    args.dbias = dbias.ptr();
    args.dweight1 = dweight1.ptr();
    args.dbias1 = dbias1.ptr();
    ASSERT_NO_THROW(engine.backward(p, args, stream())) << n;
    synchronize();
    for (const DeviceBuffer* b : {&dweight, &dbias, &dweight1, &dbias1}) {
      const std::vector<unsigned char> got = b->download_all();
      EXPECT_TRUE(std::all_of(got.begin(), got.end(), [](unsigned char c) { return c == 0; })) << "N=" << n;
    }
  }
}

}  // namespace
}  // namespace normjit::test
