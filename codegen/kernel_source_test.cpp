#include "codegen/kernel_source.h"

#include <gtest/gtest.h>

#include "codegen/cache_key.h"
#include "codegen/embedded_templates.h"
#include "codegen/norm_problem.h"

using namespace normjit;

namespace {
NormProblem problem(NormKind kind, int64_t n, DType x) {
  NormProblem p;
  p.kind = kind;
  p.n = n;
  p.x_dtype = x;
  p.weight_dtype = DType::F32;
  p.has_bias = kind == NormKind::LayerNorm;
  return codegen::resolve_problem(p);
}
std::string source_of(const NormProblem& p) {
  return codegen::generate_backward_source(p, codegen::choose_launch_config(p)).text;
}
}  // namespace

TEST(KernelSource, HasTheProblemAsCompileTimeConstants) {
  const std::string s = source_of(problem(NormKind::LayerNorm, 5003, DType::BF16));
  EXPECT_NE(s.find("constexpr i64 kN = 5003;"), std::string::npos);
  EXPECT_NE(s.find("typedef bf16 TX;"), std::string::npos);
  EXPECT_NE(s.find("typedef float TW;"), std::string::npos);
  EXPECT_NE(s.find("constexpr bool kLayerNorm = true;"), std::string::npos);
  EXPECT_NE(s.find("constexpr bool kHasBias = true;"), std::string::npos);
}

TEST(KernelSource, StartsWithACommentNamingTheProblemAndLaunch) {
  const std::string s = source_of(problem(NormKind::RMSNorm, 4096, DType::F16));
  EXPECT_EQ(s.rfind("// normjit generated kernel: rmsnorm N=4096 x=fp16", 0), 0u) << s.substr(0, 120);
  EXPECT_NE(s.find("// launch: threads="), std::string::npos);
}

TEST(KernelSource, HasBothEntryPoints) {
  const std::string s = source_of(problem(NormKind::LayerNorm, 1, DType::F32));
  EXPECT_NE(s.find(std::string("extern \"C\" __global__ void __launch_bounds__(nj::cfg::kThreads, nj::cfg::kMinBlocks)\n") +
                   codegen::KernelSource::kBackwardEntry),
            std::string::npos);
  EXPECT_NE(s.find(codegen::KernelSource::kReduceEntry), std::string::npos);
}

TEST(KernelSource, NeedsNoHeaderFiles) {
  // NVRTC compiles it with no include path: the templates bring their own types.
  const std::string s = source_of(problem(NormKind::LayerNorm, 4096, DType::BF16));
  EXPECT_EQ(s.find("#include"), std::string::npos);
}

TEST(KernelSource, IsTheSameTextEveryTime) {
  const NormProblem p = problem(NormKind::LayerNorm, 7168, DType::BF16);
  EXPECT_EQ(source_of(p), source_of(p));
}

TEST(CacheKey, IsStableAcrossRunsAndMachines) {
  // A fixed input must give a fixed key: the disk cache is shared across processes and hosts.
  const codegen::CompileTarget target{90, "13.0"};
  EXPECT_EQ(codegen::cache_key("__global__ void k() {}", target),
            codegen::cache_key(std::string("__global__ void k() {}"), codegen::CompileTarget{90, "13.0"}));
  EXPECT_EQ(codegen::cache_key("x", target).size(), 64u);
}

TEST(CacheKey, ChangesWithSourceArchAndNvrtcVersion) {
  const std::string base = codegen::cache_key("src", {90, "13.0"});
  EXPECT_NE(base, codegen::cache_key("src ", {90, "13.0"}));
  EXPECT_NE(base, codegen::cache_key("src", {80, "13.0"}));
  EXPECT_NE(base, codegen::cache_key("src", {90, "12.8"}));
}

TEST(CacheKey, DiffersForEveryProblemField) {
  const NormProblem base = problem(NormKind::LayerNorm, 4096, DType::BF16);
  std::vector<NormProblem> variants(8, base);
  variants[0].n = 4097;
  variants[1].kind = NormKind::RMSNorm;
  variants[1].has_bias = false;
  variants[2].x_dtype = variants[2].dy_dtype = variants[2].dx_dtype = DType::F16;
  variants[3].dx_dtype = DType::F32;
  variants[4].weight_dtype = DType::BF16;
  variants[5].has_weight = false;
  variants[6].has_bias = false;
  variants[7].alignment = 4;
  const codegen::CompileTarget t{90, "13.0"};
  const std::string key = codegen::cache_key(source_of(base), t);
  for (const NormProblem& v : variants) EXPECT_NE(key, codegen::cache_key(source_of(v), t)) << codegen::describe(v);
}

// ---- fused options (docs/FUSED.md) -------------------------------------------------------------
namespace {

// One problem per kernel family (sm_90): several rows per block, a row in registers, staged,
// staged with shifted (interleaved) rows, staged and register clusters, streamed.
std::vector<NormProblem> one_problem_per_family() {
  std::vector<NormProblem> out = {problem(NormKind::RMSNorm, 33, DType::F16),
                                  problem(NormKind::LayerNorm, 4096, DType::BF16),
                                  problem(NormKind::LayerNorm, 5120, DType::BF16),
                                  problem(NormKind::LayerNorm, 5003, DType::BF16),
                                  problem(NormKind::RMSNorm, 65536, DType::BF16),
                                  problem(NormKind::RMSNorm, 65536, DType::F32),
                                  problem(NormKind::LayerNorm, 262144, DType::BF16)};
  out[3].alignment = 2;
  return out;
}

std::string source_for(const NormProblem& p, int sm) {
  return codegen::generate_backward_source(p, codegen::choose_launch_config(p, sm)).text;
}

// Names only the fused section defines or uses.
const char* const kFusedNames[] = {"fused",     "Fused",        "kResidual",     "kZeroCenteredWeight",
                                   "kRowScale", "kDropoutMask", "kScalesBranch", "stored_weight_to_gamma",
                                   "dresidual", "keep_scale",   "kGate",         "silu",
                                   "gate_",     "kParallel",    "second_norm",   "dy1",
                                   "dw1",       "kRecompute",   "recover_",      "fallback_x",
                                   "unrecoverable"};

}  // namespace

TEST(KernelSource, WithoutOptionsCarriesNoTraceOfTheFusedSection) {
  for (const NormProblem& p : one_problem_per_family()) {
    const std::string s = source_for(p, 90);
    for (const char* name : kFusedNames) EXPECT_EQ(s.find(name), std::string::npos) << name << " in " << codegen::describe(p);
    EXPECT_EQ(s.find(codegen::template_text("fused_ops.cuh")), std::string::npos);
  }
}

TEST(KernelSource, EachOptionBringsTheFusedSectionAndItsConstants) {
  NormProblem p = problem(NormKind::LayerNorm, 4096, DType::BF16);
  p.residual = true;
  const std::string residual = source_of(p);
  EXPECT_NE(residual.find("constexpr bool kResidual = true;"), std::string::npos);
  EXPECT_NE(residual.find("constexpr int kDropoutMask = 0;"), std::string::npos);
  EXPECT_NE(residual.find("struct FusedParams"), std::string::npos);
  EXPECT_NE(residual.find("FusedParams fused;"), std::string::npos);
  EXPECT_EQ(residual.find("// fused:begin"), std::string::npos);  // markers never reach NVRTC
  p.residual = false;
  p.dropout = DropoutMask::Bits;
  EXPECT_NE(source_of(p).find("constexpr int kDropoutMask = 2;"), std::string::npos);
  EXPECT_NE(source_of(p).find("constexpr int kGate = 0;"), std::string::npos);
  NormProblem gated = problem(NormKind::RMSNorm, 4096, DType::BF16);
  gated.gate = Gate::BeforeNorm;
  const std::string before = source_of(gated);
  EXPECT_NE(before.find("constexpr int kGate = 2;"), std::string::npos);
  EXPECT_NE(before.find("gate_inputs(p.fused, row, col, r.x[i], r.dy[i]);"), std::string::npos);
  NormProblem parallel = problem(NormKind::LayerNorm, 4096, DType::BF16);
  parallel.parallel = true;
  EXPECT_NE(source_of(parallel).find("constexpr bool kParallel = true;"), std::string::npos);
  NormProblem recompute = problem(NormKind::LayerNorm, 4096, DType::BF16);
  recompute.recompute_from_output = true;
  const std::string from_output = source_of(recompute);
  EXPECT_NE(from_output.find("constexpr bool kRecompute = true;"), std::string::npos);
  EXPECT_NE(from_output.find("constexpr bool kParallel = false;"), std::string::npos);
  EXPECT_NE(from_output.find("recover_slot(p, valid, row,"), std::string::npos);
}

TEST(CacheKey, DiffersForEveryFusedOption) {
  const NormProblem base = problem(NormKind::LayerNorm, 4096, DType::BF16);
  std::vector<NormProblem> variants(5, base);
  variants[0].residual = true;
  variants[1].zero_centered_weight = true;
  variants[2].rowscale = true;
  variants[3].dropout = DropoutMask::Bytes;
  variants[4].dropout = DropoutMask::Bits;
  // The gate (RMSNorm only): the plain RMSNorm and each gate order.
  const NormProblem rms = problem(NormKind::RMSNorm, 4096, DType::BF16);
  for (Gate gate : {Gate::None, Gate::AfterNorm, Gate::BeforeNorm}) {
    variants.push_back(rms);
    variants.back().gate = gate;
  }
  variants.push_back(base);
  variants.back().parallel = true;
  variants.push_back(base);
  variants.back().recompute_from_output = true;
  variants.push_back(rms);
  variants.back().recompute_from_output = true;
  const codegen::CompileTarget t{90, "13.0"};
  std::vector<std::string> keys = {codegen::cache_key(source_of(base), t)};
  for (const NormProblem& v : variants) {
    const std::string key = codegen::cache_key(source_of(v), t);
    for (const std::string& other : keys) EXPECT_NE(key, other) << codegen::describe(v);
    keys.push_back(key);
  }
}
