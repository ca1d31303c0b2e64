// The engine's kernel maps key a kernel by (context, problem code, M bucket): two problems that
// compile differently must never share a code. Session 42's Python tests found that rows out of
// phase and the forward took the same bit: a forward call then found the backward's kernel of its
// shape out of phase and launched its missing forward entry point (CUDA_ERROR_INVALID_HANDLE).
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>

#include "codegen/forward_config.h"
#include "codegen/norm_problem.h"
#include "runtime/engine_impl.h"
#include "support/problem_variants.h"

namespace normjit {
namespace {

TEST(EngineProblemCode, TellsApartEveryProblemAndPass) {
  // What the kernel depends on, as text: the pass, the problem's description (which names the
  // alignment and "out-of-phase"), and the fused options. Two cases share a code exactly when
  // they share this.
  std::map<uint64_t, std::string> seen;
  int cases = 0;
  for (codegen::Pass pass : {codegen::Pass::Backward, codegen::Pass::Forward})
    for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm})
      for (int64_t n : {int64_t{1}, int64_t{2}, int64_t{1000}, int64_t{1001}, int64_t{1} << 31})
        for (int alignment : {16, 8, 2})
          for (bool in_phase : {true, false})
            for (bool residual : {false, true}) {
              NormProblem raw = test::make_problem(kind, n, DType::BF16, DType::F32,
                                                   kind == NormKind::LayerNorm ? test::Affine::WeightAndBias
                                                                               : test::Affine::WeightOnly);
              raw.alignment = alignment;
              raw.rows_in_phase = in_phase;
              raw.residual = residual;
              const NormProblem p = pass == codegen::Pass::Forward ? codegen::resolve_forward_problem(raw)
                                                                   : codegen::resolve_problem(raw);
              const std::string what = std::string(pass == codegen::Pass::Forward ? "forward " : "backward ") +
                                       codegen::describe(p, pass);
              const uint64_t code = Engine::Impl::problem_code(p, pass);
              EXPECT_EQ(code >> 48 & 0xff, 0u) << what << ": bits 48-55 are kernel_for's M bucket";
              const auto [at, inserted] = seen.try_emplace(code, what);
              if (!inserted) EXPECT_EQ(at->second, what) << "one code for two kernels";
              ++cases;
            }
  // Aligned rows have no phase (the description leaves it out): each such pair shares its code.
  EXPECT_EQ(seen.size(), static_cast<size_t>(cases - cases / 6));
}

}  // namespace
}  // namespace normjit
