// Recompute from the output (docs/FUSED.md) on the GPU against the float64 reference. The
// forward's output y is computed in float64 from the random (stored) x and rounded to x's dtype;
// the reference recovers x̂ = (y − β)/γ from that stored y in float64, as the kernel does in fp32.
// Covered: LayerNorm and RMSNorm over N in {1, 33, 4096, 8192, 65536} and M in {1, 199, 4096}
// with the x dtype rotating through bf16, fp16 and fp32 and the weight fp32 or x's dtype (y rows
// padded in some cases; x given as the fallback in a third); every kernel family with the
// residual, zero-centred γ, row scale, dropout (both masks) and another dx dtype; misaligned
// rows; γ only, β only and no affine at all; and columns where γ = 0, which with x given are
// exact like every other, and without x are NaN in exactly their dx and dγ while every other
// element matches. Outputs are NaN-poisoned before each run and every case draws fresh inputs
// (its seed is printed with any failure).
//
// Filter: --gtest_filter='BackwardRecompute.*'
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "support/device_run.h"
#include "support/fused_cases.h"
#include "support/kernel_warmup.h"
#include "support/problem_variants.h"
#include "support/random.h"
#include "support/reference.h"
#include "support/shared_engine.h"

namespace normjit::test {
namespace {

constexpr DType kDtypes[] = {DType::BF16, DType::F16, DType::F32};

NormProblem recompute(NormProblem p) {
  p.recompute_from_output = true;
  return p;
}

// LayerNorm with γ and β, RMSNorm with γ, the weight in `weight`'s dtype.
NormProblem recompute_problem(NormKind kind, int64_t n, DType x, DType weight, DType dx = DType::Default) {
  return recompute(make_problem(kind, n, x, weight, kind == NormKind::LayerNorm ? Affine::WeightAndBias : Affine::WeightOnly,
                                dx));
}

// The family cases: each family shape in bf16 and fp32 (their families differ from 65536 on),
// the kind alternating, with the other options in turn (and a dx dtype other than x's).
std::vector<FusedCase> family_cases() {
  std::vector<FusedCase> cases;
  for (const FamilyShape& f : kFamilyShapes)
    for (DType x : {DType::BF16, DType::F32}) {
      const int index = static_cast<int>(cases.size());
      const NormKind kind = index % 2 == 0 ? NormKind::LayerNorm : NormKind::RMSNorm;
      const DType dx = index % 5 != 4 ? DType::Default : x == DType::F32 ? DType::BF16 : DType::F32;
      NormProblem p = recompute_problem(kind, f.n, x, DType::F32, dx);
      FusedSpec spec;
      switch (index % 5) {
        case 0: p.residual = true; break;
        case 1: p.zero_centered_weight = true, p.dropout = DropoutMask::Bits; break;
        case 2: p.rowscale = true, p.dropout = DropoutMask::Bytes, p.residual = true; break;
        case 3: p.residual = p.zero_centered_weight = p.rowscale = true, p.dropout = DropoutMask::Bits; break;
        default: break;  // dx in another dtype
      }
      spec.dropout_p = 0.25;
      spec.y_stride = f.n + 8;
      cases.push_back({p, f.m, spec, {}});
    }
  return cases;
}

class BackwardRecompute : public GpuTest {};

TEST_F(BackwardRecompute, MatchesFloat64ReferenceOverTheIssuesShapes) {
  std::vector<FusedCase> cases;
  for (size_t i = 0; i < kFusedHiddenSizes.size(); ++i)
    for (int64_t m : kFusedRowCounts)
      for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm}) {
        const int64_t n = kFusedHiddenSizes[i];
        if (m > 1 && m * n > fused_max_elements()) continue;
        const int index = static_cast<int>(cases.size());
        const DType x = kDtypes[(i + index) % 3];
        FusedCase c{recompute_problem(kind, n, x, index % 2 == 0 ? DType::F32 : x), m, {}, {}};
        c.spec.recompute_with_x = index % 3 == 1;  // x as the fallback in a third of the cases
        c.spec.y_stride = index % 4 == 2 ? n + 8 : 0;
        c.run.caller_workspace = index % 2 == 1;
        cases.push_back(c);
      }
  run_fused_cases(shared_engine(), stream(), cases);
}

TEST_F(BackwardRecompute, EveryKernelFamilyWithTheOtherOptions) {
  run_fused_cases(shared_engine(), stream(), family_cases());
}

// Base pointers one element off 16 bytes: narrower vectors, and shifted (interleaved) staged rows.
TEST_F(BackwardRecompute, MisalignedRows) {
  std::vector<FusedCase> cases;
  for (int64_t n : {4096, 5120, 65536, 262144}) {
    const DType x = n == 5120 || n == 262144 ? DType::F16 : DType::BF16;
    FusedCase c{recompute_problem(NormKind::LayerNorm, n, x, DType::F32), n > 65536 ? 3 : 37, {}, {}};
    c.spec.recompute_with_x = x == DType::F16;
    c.run.misalign_elements = 1;
    cases.push_back(c);
  }
  run_fused_cases(shared_engine(), stream(), cases);
}

// γ only, β only (x̂ = y − β), neither (y is x̂ itself), and RMSNorm without γ.
TEST_F(BackwardRecompute, EveryAffineForm) {
  std::vector<FusedCase> cases;
  for (int64_t n : {33, 5003}) {
    for (Affine affine : {Affine::WeightOnly, Affine::BiasOnly, Affine::None})
      cases.push_back({recompute(make_problem(NormKind::LayerNorm, n, DType::BF16, DType::F32, affine)), 37, {}, {}});
    cases.push_back({recompute(make_problem(NormKind::RMSNorm, n, DType::F32, DType::F32, Affine::None)), 37, {}, {}});
  }
  run_fused_cases(shared_engine(), stream(), cases);
}

// Columns where γ = 0 (stored −1 when zero-centred), in every family and with the other
// options (the family cases' kernels): y = β there whatever x̂ was. With x given, those columns
// come from x and everything matches the reference; without x, exactly their dx (and dh) and dγ
// are NaN in every row, dβ is whole, and every other element matches: the reference says so,
// element by element, and the positions are checked here too.
TEST_F(BackwardRecompute, ColumnsWhereGammaIsZero) {
  Engine& engine = shared_engine();
  const std::vector<FusedCase> cases = family_cases();
  std::vector<NormProblem> kernels;
  for (const FusedCase& c : cases)
    for (const NormProblem& v : alignment_variants(c.problem)) kernels.push_back(v);
  const std::vector<std::string> failures = prepare_in_parallel(engine, kernels);
  ASSERT_TRUE(failures.empty()) << failures.size() << " kernels failed to prepare, the first: " << failures.front();
  for (const FusedCase& c : cases)
    for (bool with_x : {true, false}) {
      FusedSpec spec = c.spec;
      spec.recompute_with_x = with_x;
      NormInputs in = make_inputs(c.problem, c.m, fresh_seed(), {}, spec);
      const int64_t n = in.n();
      std::vector<int64_t> zero = {0, n / 3, n / 2, n - 1};
      zero.erase(std::unique(zero.begin(), zero.end()), zero.end());
      for (int64_t col : zero) in.weight.set(0, col, in.problem.zero_centered_weight ? -1.0 : 0.0);
      compute_forward_output(in);  // y = β in those columns
      Gradients out;
      try {
        out = run_backward_on_gpu(engine, in, stream());
      } catch (const std::exception& e) {
        ADD_FAILURE() << describe_case(in) << "\n  threw: " << e.what();
        continue;
      }
      EXPECT_TRUE(gradients_match(in, out, reference_backward(in)));
      // Where the NaNs are: nowhere with x; without x in exactly the γ = 0 columns of dx and dγ.
      int64_t misplaced = 0;
      for (int64_t r = 0; r < in.m; ++r)
        for (int64_t col = 0; col < n; ++col) {
          const bool want_nan = !with_x && std::find(zero.begin(), zero.end(), col) != zero.end();
          misplaced += std::isnan(out.dx.get(r, col)) != want_nan;
        }
      for (int64_t col = 0; col < n; ++col) {
        const bool want_nan = !with_x && std::find(zero.begin(), zero.end(), col) != zero.end();
        misplaced += std::isnan(out.dweight.get(0, col)) != want_nan;
        if (in.problem.has_bias) misplaced += std::isnan(out.dbias.get(0, col));
      }
      EXPECT_EQ(misplaced, 0) << describe_case(in) << ": dx, dweight and dbias elements NaN where they should "
                              << "not be or not NaN where they should (γ = 0 columns: " << zero.size() << ")";
    }
}

// An empty batch zeroes dγ and dβ, as without the option; y and β are not needed for it.
TEST_F(BackwardRecompute, ZeroRowsZeroTheParameterGradients) {
  Engine& engine = shared_engine();
  for (int64_t n : {33, 4096, 262144}) {
    const NormProblem p = recompute_problem(NormKind::LayerNorm, n, DType::BF16, DType::F32);
    const size_t bytes = static_cast<size_t>(n) * dtype_bytes(p.weight_dtype);
    DeviceBuffer dweight(bytes), dbias(bytes);
    dweight.poison();
    dbias.poison();
    BackwardArgs args;
    args.m = 0;
    args.dweight = dweight.ptr();
    args.dbias = dbias.ptr();
    ASSERT_NO_THROW(engine.backward(p, args, stream())) << n;
    synchronize();
    for (const DeviceBuffer* b : {&dweight, &dbias}) {
      const std::vector<unsigned char> got = b->download_all();
      EXPECT_TRUE(std::all_of(got.begin(), got.end(), [](unsigned char c) { return c == 0; })) << "N=" << n;
    }
  }
}

}  // namespace
}  // namespace normjit::test
