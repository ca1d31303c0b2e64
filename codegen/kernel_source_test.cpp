#include "codegen/kernel_source.h"

#include <gtest/gtest.h>

#include <sstream>

#include "codegen/cache_key.h"
#include "codegen/embedded_templates.h"
#include "codegen/forward_config.h"
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

// Realigned slots are switched on by the config (x's slots wider than the rows' alignment),
// in both passes; other kernels' source does not mention them.
TEST(KernelSource, DefinesRealignedSlotsOnlyForConfigsThatAskForThem) {
  const std::string kDefine = "#define NJ_REALIGNED_SLOTS 1";
  NormProblem odd;
  odd.n = 40001;
  odd.x_dtype = DType::BF16;
  odd.alignment = 2;
  odd.rows_in_phase = false;  // rows in phase are read as aligned chunks instead (below)
  odd = codegen::resolve_problem(odd);
  const codegen::LaunchConfig realigned = codegen::choose_launch_config(odd, 90, 132);
  ASSERT_TRUE(codegen::realigned_slots(odd, realigned));
  EXPECT_NE(codegen::generate_backward_source(odd, realigned).text.find(kDefine), std::string::npos);
  const NormProblem odd_forward = codegen::resolve_forward_problem(odd);
  const codegen::LaunchConfig forward = codegen::choose_forward_config(odd_forward, 90);
  ASSERT_TRUE(codegen::realigned_slots(odd_forward, forward));
  EXPECT_NE(codegen::generate_forward_source(odd_forward, forward).text.find(kDefine), std::string::npos);

  NormProblem short_odd = odd;
  short_odd.n = 4001;  // an element a thread a pass
  const codegen::LaunchConfig scalar = codegen::choose_launch_config(short_odd, 90, 132);
  EXPECT_EQ(codegen::generate_backward_source(short_odd, scalar).text.find(kDefine), std::string::npos);
  const NormProblem aligned = problem(NormKind::LayerNorm, 4096, DType::BF16);
  EXPECT_EQ(codegen::generate_backward_source(aligned, codegen::choose_launch_config(aligned, 90)).text.find(kDefine),
            std::string::npos);

  // The same rows in phase: aligned chunks, phased, never realigned.
  NormProblem in_phase = odd;
  in_phase.n = 30001;  // an H200's cluster of four where aligned
  in_phase.rows_in_phase = true;
  const codegen::LaunchConfig phased = codegen::choose_launch_config(in_phase, 90, 132, 2236, 18.4);
  ASSERT_TRUE(phased.phased) << codegen::describe(phased);
  EXPECT_FALSE(codegen::realigned_slots(in_phase, phased));
  const std::string text = codegen::generate_backward_source(in_phase, phased).text;
  EXPECT_EQ(text.find(kDefine), std::string::npos);
  EXPECT_NE(text.find("constexpr bool kPhased = true;"), std::string::npos);
  EXPECT_NE(codegen::generate_backward_source(odd, realigned).text.find("constexpr bool kPhased = false;"),
            std::string::npos);
}

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
  EXPECT_NE(from_output.find("recover_slot(p, valid_k, row_k,"), std::string::npos);
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

// ---- the forward's fused options (docs/FORWARD.md) ---------------------------------------------
namespace {

NormProblem forward_problem(NormKind kind, int64_t n, DType x) {
  return codegen::resolve_forward_problem(problem(kind, n, x));
}

std::string forward_source_for(const NormProblem& p, int sm = 90) {
  const NormProblem r = codegen::resolve_forward_problem(p);
  return codegen::generate_forward_source(r, codegen::choose_forward_config(r, sm)).text;
}

// One problem per forward family on sm_90: several rows a block, a warp a row, a row a block in
// registers (aligned and 2-byte rows), a cluster a row, streamed.
std::vector<NormProblem> one_forward_problem_per_family() {
  std::vector<NormProblem> out = {forward_problem(NormKind::RMSNorm, 33, DType::F16),
                                  forward_problem(NormKind::LayerNorm, 1000, DType::BF16),
                                  forward_problem(NormKind::LayerNorm, 4096, DType::BF16),
                                  forward_problem(NormKind::LayerNorm, 5003, DType::BF16),
                                  forward_problem(NormKind::RMSNorm, 65536, DType::BF16),
                                  forward_problem(NormKind::LayerNorm, 262144, DType::BF16)};
  out[3].alignment = 2;
  return out;
}

// The source without its comments: what NVRTC compiles. (The template's own header comment
// describes the fused options in words; only code may not mention them.)
std::string code_only(const std::string& text) {
  std::string out;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    const size_t comment = line.find("//");
    out += line.substr(0, comment);
    out += '\n';
  }
  return out;
}

bool has_line(const std::string& text, const std::string& wanted) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    const size_t first = line.find_first_not_of(' ');
    if (first != std::string::npos && line.compare(first, std::string::npos, wanted) == 0) return true;
  }
  return false;
}

// Names only the forward's fused section defines or uses.
const char* const kForwardFusedNames[] = {
    "fused",     "Fused",         "kResidual",      "kRowScale",   "kDropoutMask", "kGate",
    "kParallel", "kPreNormSum",   "kHoldsGate",     "philox",      "Philox",       "keep_bits",
    "keep",      "drop_below",    "silu",           "sigmoid",     "residual",     "rowscale",
    "gate_",     "weight1",       "bias1",          "y1",          "z_stride",     "second_output",
    "form_pre_norm_sum",          "write_pre_norm_outputs"};

}  // namespace

TEST(KernelSource, ForwardWithoutOptionsCarriesNoTraceOfTheFusedSection) {
  for (NormProblem p : one_forward_problem_per_family())
    for (bool zero_centered : {false, true}) {
      p.zero_centered_weight = zero_centered;  // one of the plain forward's constants
      const std::string s = forward_source_for(p);
      const std::string code = code_only(s);
      for (const char* name : kForwardFusedNames)
        EXPECT_EQ(code.find(name), std::string::npos) << name << " in " << codegen::describe_forward(p);
      EXPECT_FALSE(has_line(s, "// fused:begin")) << codegen::describe_forward(p);
      EXPECT_FALSE(has_line(s, "// fused:end")) << codegen::describe_forward(p);
      EXPECT_EQ(s.find(codegen::template_text("philox.cuh")), std::string::npos);
      EXPECT_EQ(s.find(codegen::template_text("gate_math.cuh")), std::string::npos);
      EXPECT_EQ(s.find(codegen::template_text("fused_ops.cuh")), std::string::npos);
      EXPECT_NE(s.find("typedef " + std::string(p.x_dtype == DType::F16 ? "f16" : "bf16") + " TY;  // y"),
                std::string::npos)
          << codegen::describe_forward(p);
    }
  // recompute_from_output and dx_dtype are the backward's: the same plain source.
  NormProblem p = forward_problem(NormKind::LayerNorm, 4096, DType::BF16);
  NormProblem q = p;
  q.recompute_from_output = true;
  q.dx_dtype = DType::F32;
  EXPECT_EQ(forward_source_for(p), forward_source_for(q));
}

// bf16's widening is inline PTX (templates/common.cuh) only in the forward's kernels that form a
// pre-norm sum: the residual, the row scale or dropout, on bf16 x; never without options, for
// fp16 or fp32 x, for the forward's other options, nor in the backward.
TEST(KernelSource, OnlyTheForwardsBf16PreNormSumsWidenByInlinePtx) {
  const std::string kDefine = "#define NJ_OPAQUE_BF16_WIDENING 1";
  for (NormProblem p : one_forward_problem_per_family()) {
    EXPECT_EQ(forward_source_for(p).find(kDefine), std::string::npos) << codegen::describe_forward(p);
    for (int option = 0; option < 3; ++option) {
      NormProblem q = p;
      if (option == 0) q.residual = true;
      if (option == 1) q.rowscale = true;
      if (option == 2) q.dropout = DropoutMask::Bits;
      const bool bf16 = q.x_dtype == DType::BF16;
      EXPECT_EQ(forward_source_for(q).find(kDefine) != std::string::npos, bf16) << codegen::describe_forward(q);
      const NormProblem backward = codegen::resolve_problem(q);
      EXPECT_EQ(codegen::generate_backward_source(backward, codegen::choose_launch_config(backward, 90)).text.find(kDefine),
                std::string::npos)
          << codegen::describe(backward);
      q.x_dtype = DType::F16;
      EXPECT_EQ(forward_source_for(q).find(kDefine), std::string::npos) << codegen::describe_forward(q);
    }
    NormProblem gated = p;
    gated.kind = NormKind::RMSNorm;
    gated.has_bias = false;
    gated.gate = Gate::AfterNorm;
    EXPECT_EQ(forward_source_for(gated).find(kDefine), std::string::npos) << codegen::describe_forward(gated);
  }
}

TEST(KernelSource, EachForwardOptionBringsItsConstants) {
  struct Option {
    const char* name;
    void (*set)(NormProblem&);
    std::vector<std::string> constants;  // each must appear
  };
  const Option options[] = {
      {"residual", [](NormProblem& p) { p.residual = true; },
       {"constexpr bool kResidual = true;", "constexpr bool kRowScale = false;", "constexpr int kDropoutMask = 0;",
        "constexpr int kGate = 0;", "constexpr bool kParallel = false;"}},
      {"rowscale", [](NormProblem& p) { p.rowscale = true; },
       {"constexpr bool kResidual = false;", "constexpr bool kRowScale = true;", "constexpr int kDropoutMask = 0;"}},
      {"dropout bytes", [](NormProblem& p) { p.dropout = DropoutMask::Bytes; },
       {"constexpr int kDropoutMask = 1;", "constexpr bool kRowScale = false;"}},
      {"dropout bits", [](NormProblem& p) { p.dropout = DropoutMask::Bits; }, {"constexpr int kDropoutMask = 2;"}},
      {"gate after the norm",
       [](NormProblem& p) {
         p.kind = NormKind::RMSNorm;
         p.has_bias = false;
         p.gate = Gate::AfterNorm;
       },
       {"constexpr int kGate = 1;", "constexpr int kDropoutMask = 0;", "constexpr bool kParallel = false;"}},
      {"gate before the norm",
       [](NormProblem& p) {
         p.kind = NormKind::RMSNorm;
         p.has_bias = false;
         p.gate = Gate::BeforeNorm;
       },
       {"constexpr int kGate = 2;"}},
      {"parallel", [](NormProblem& p) { p.parallel = true; },
       {"constexpr bool kParallel = true;", "constexpr bool kResidual = false;", "constexpr int kGate = 0;"}},
  };
  for (const NormProblem& family : one_forward_problem_per_family())
    for (const Option& o : options) {
      NormProblem p = family;
      o.set(p);
      const std::string s = forward_source_for(p);
      const std::string what = std::string(o.name) + " in " + codegen::describe_forward(p);
      for (const std::string& c : o.constants) EXPECT_NE(s.find(c), std::string::npos) << c << ": " << what;
      EXPECT_NE(s.find(codegen::template_text("philox.cuh")), std::string::npos) << what;
      EXPECT_NE(s.find(codegen::template_text("gate_math.cuh")), std::string::npos) << what;
      EXPECT_EQ(s.find(codegen::template_text("fused_ops.cuh")), std::string::npos) << what;  // the backward's
      EXPECT_NE(s.find("const TX* residual;"), std::string::npos) << what;  // the parameter's fused fields
      EXPECT_NE(s.find("form_pre_norm_sum"), std::string::npos) << what;
      EXPECT_FALSE(has_line(s, "// fused:begin")) << what;  // markers never reach NVRTC
      EXPECT_FALSE(has_line(s, "// fused:end")) << what;
      EXPECT_EQ(s.find("kRecompute"), std::string::npos) << what;
      EXPECT_EQ(s.find(codegen::KernelSource::kBackwardEntry), std::string::npos) << what;
      EXPECT_EQ(s.find("#include"), std::string::npos) << what;
      EXPECT_NE(s.rfind("// normjit generated kernel: " + codegen::describe_forward(p) + "\n", 0), std::string::npos)
          << what;
    }
}

TEST(KernelSource, ForwardTyFollowsTheYDtype) {
  for (DType x : {DType::F32, DType::F16, DType::BF16})
    for (DType y : {DType::Default, DType::F32, DType::F16, DType::BF16}) {
      NormProblem p = forward_problem(NormKind::RMSNorm, 4096, x);
      p.dy_dtype = y;
      const DType stored = y == DType::Default ? x : y;
      auto name = [](DType d) { return std::string(d == DType::F32 ? "float" : d == DType::F16 ? "f16" : "bf16"); };
      const std::string s = forward_source_for(p);
      EXPECT_NE(s.find("typedef " + name(x) + " TX;  // x\n"), std::string::npos) << codegen::describe_forward(p);
      EXPECT_NE(s.find("typedef " + name(stored) + " TY;  // y\n"), std::string::npos) << codegen::describe_forward(p);
      EXPECT_NE(s.find(std::string(" y=") + codegen::dtype_name(stored) + " "), std::string::npos);
      // With a fused option too (y1 is stored as y).
      p.parallel = true;
      EXPECT_NE(forward_source_for(p).find("typedef " + name(stored) + " TY;  // y\n"), std::string::npos);
    }
}

TEST(CacheKey, ForwardKeyDiffersForEveryFusedOption) {
  const NormProblem base = forward_problem(NormKind::LayerNorm, 4096, DType::BF16);
  const NormProblem rms = forward_problem(NormKind::RMSNorm, 4096, DType::BF16);
  std::vector<NormProblem> variants = {base, rms};
  auto add = [&](const NormProblem& from, void (*edit)(NormProblem&)) {
    NormProblem p = from;
    edit(p);
    variants.push_back(p);
  };
  for (const NormProblem* from : {&base, &rms}) {
    add(*from, [](NormProblem& p) { p.residual = true; });
    add(*from, [](NormProblem& p) { p.rowscale = true; });
    add(*from, [](NormProblem& p) { p.dropout = DropoutMask::Bytes; });
    add(*from, [](NormProblem& p) { p.dropout = DropoutMask::Bits; });
    add(*from, [](NormProblem& p) { p.parallel = true; });
    add(*from, [](NormProblem& p) { p.zero_centered_weight = true; });
    add(*from, [](NormProblem& p) { p.dy_dtype = DType::F32; });
    add(*from, [](NormProblem& p) { p.residual = p.rowscale = true; });
    add(*from, [](NormProblem& p) {
      p.residual = true;
      p.dropout = DropoutMask::Bits;
    });
  }
  add(rms, [](NormProblem& p) { p.gate = Gate::AfterNorm; });
  add(rms, [](NormProblem& p) { p.gate = Gate::BeforeNorm; });
  add(rms, [](NormProblem& p) {
    p.gate = Gate::BeforeNorm;
    p.residual = true;
  });
  const codegen::CompileTarget t{90, "13.0"};
  std::vector<std::string> keys;
  for (const NormProblem& v : variants) {
    const std::string key = codegen::cache_key(forward_source_for(v), t);
    for (const std::string& other : keys) EXPECT_NE(key, other) << codegen::describe_forward(v);
    keys.push_back(key);
    // Never a backward's key either.
    const NormProblem b = codegen::resolve_problem(v);
    EXPECT_NE(key, codegen::cache_key(source_of(b), t)) << codegen::describe_forward(v);
  }
}

// The reduction's launch (runtime) and its kernel's constants (the source) come from one place.
TEST(KernelSource, CarriesTheReductionShapeTheLaunchUses) {
  for (const int64_t n : {1, 33, 4096, 5003, 16383, 16384, 16388, 65536, 262145}) {
    const NormProblem p = problem(NormKind::LayerNorm, n, DType::BF16);
    const codegen::ReduceShape r = codegen::reduce_shape(p);
    const std::string s = source_of(p);
    EXPECT_NE(s.find("constexpr int kReduceAcross = " + std::to_string(r.across) + ";"), std::string::npos) << n;
    EXPECT_NE(s.find("constexpr int kReduceLanes = " + std::to_string(r.lanes) + ";"), std::string::npos) << n;
    EXPECT_NE(s.find("constexpr int kReduceVec = " + std::to_string(r.vec) + ";"), std::string::npos) << n;
    // 16-byte slices only for long rows of whole slices; the blocks cover every column once.
    EXPECT_EQ(r.vec, n % 4 == 0 && n >= 16384 ? 4 : 1) << n;
    EXPECT_GE(r.blocks_per_gradient(n) * r.columns_per_block(), n) << n;
    EXPECT_LT((r.blocks_per_gradient(n) - 1) * r.columns_per_block(), n) << n;
    EXPECT_LE(r.across * r.lanes, 1024) << n;
  }
}
