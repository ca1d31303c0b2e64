// The forward compiles to a cubin for sm_80 and sm_90 in every family (several rows a block, a
// warp a row, a row a block in registers, streamed rows), for odd and even N, every x dtype,
// LayerNorm and RMSNorm, both weight dtypes and every affine form: NVRTC runs on the CPU.
#include <gtest/gtest.h>

#include <set>

#include "codegen/cache_key.h"
#include "codegen/forward_config.h"
#include "codegen/kernel_source.h"
#include "codegen/norm_problem.h"
#include "normjit/normjit.hpp"
#include "runtime/nvrtc.h"

using namespace normjit;

namespace {

// 14336: a row block of 448 threads (min_blocks keeps its registers down); 32768: 1024 threads.
const int64_t kForwardNs[] = {1, 33, 1000, 4096, 5003, 14336, 32768, 65536, 262144};

// γ and β present or not, and γ zero-centred: cycled over the shapes so each appears in each family.
struct Affine { bool weight, bias, zero_centered; };
const Affine kAffine[] = {{true, true, false}, {false, false, false}, {true, false, true}, {false, true, false}};

void compile_or_fail(const runtime::Nvrtc& nvrtc, const NormProblem& p, int sm, std::set<std::string>* families) {
  const codegen::LaunchConfig c = codegen::choose_forward_config(p, sm);
  families->insert(c.row_in_registers ? (c.threads_per_row < 32    ? "rows"
                                         : c.threads_per_row == 32 ? "warp"
                                                                   : "block")
                                      : "streamed");
  const codegen::KernelSource src = codegen::generate_forward_source(p, c);
  runtime::CompileOutput out;
  ASSERT_NO_THROW(out = nvrtc.compile(src.text, src.name, codegen::compile_options({sm, nvrtc.version()}),
                                      codegen::describe_forward(p)))
      << codegen::describe_forward(p) << " sm_" << sm << " " << codegen::describe(c);
  EXPECT_GT(out.cubin.size(), 1000u);
  // No spills, but LayerNorm's fp32 cluster blocks at 64 registers: 16 bytes, and still the
  // fastest config tuning found at N = 65536 (bench/NOTES.md, entry 20).
  const int allowed = p.kind == NormKind::LayerNorm && c.cluster > 1 ? 16 : 0;
  for (const auto& r : runtime::parse_ptxas_report(out.log))
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
  EXPECT_EQ(families, (std::set<std::string>{"rows", "warp", "block", "streamed"}));
}

TEST(NvrtcForward, MisalignedAndMixedDtypesCompile) {
  std::string why;
  if (!runtime::Nvrtc::available(&why)) GTEST_SKIP() << "no NVRTC: " << why;
  const runtime::Nvrtc& nvrtc = runtime::Nvrtc::get();
  std::set<std::string> families;
  for (int alignment : {2, 4, 8})
    for (int64_t n : {1001, 8192}) {
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
